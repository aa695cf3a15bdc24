// The regions of many canvases in a temporary file (region_file.h).
#include "seq/captioning/region_file.h"

#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "tensor/error.h"

namespace attend::captioning {

namespace {

// A file over 2 GB (about 120,000 canvases of lesson 09's size) needs 64-bit offsets.
static_assert(sizeof(off_t) >= 8, "RegionFile needs 64-bit file offsets");

std::size_t canvas_bytes(Index regions, Index features) {
  return static_cast<std::size_t>(regions * features) * sizeof(float);
}

// Moves the file to canvas `canvas` (fseek takes a long: 64 bits on the course's systems).
void seek_canvas(std::FILE* file, Index canvas, std::size_t bytes, const char* op) {
  if (std::fseek(file, static_cast<long>(static_cast<std::size_t>(canvas) * bytes), SEEK_SET) != 0)
    fail("RegionFile::{}: cannot seek to canvas {} of the temporary file", op, canvas);
}

}  // namespace

RegionFile::RegionFile(Index count, Index regions, Index features)
    : count_(count), regions_(regions), features_(features) {
  if (count < 1 || regions < 1 || features < 1)
    fail("RegionFile: needs at least one canvas, region and feature, got [{}, {}, {}]", count,
         regions, features);
  errno = 0;
  file_.reset(std::tmpfile(), [](std::FILE* f) { std::fclose(f); });
  if (!file_)
    fail(
        "RegionFile: cannot create a temporary file for {} canvases x {} regions x {} features: "
        "{} (is the temporary folder full?)",
        count, regions, features, std::strerror(errno));
}

void RegionFile::write(Index first, const NDArray& regions) {
  if (!file_) fail("RegionFile::write: the file was never created");
  if (regions.dtype() != kFloat32 || regions.ndim() != 3 || regions.size(1) != regions_ ||
      regions.size(2) != features_)
    fail("RegionFile::write: expected float32 [n,{},{}], got {} {}", regions_, features_,
         dtype_name(regions.dtype()), regions.shape());
  if (first < 0 || first + regions.size(0) > count_)
    fail("RegionFile::write: canvases {}..{} are outside 0..{}", first, first + regions.size(0) - 1,
         count_ - 1);
  const std::size_t bytes = canvas_bytes(regions_, features_);
  seek_canvas(file_.get(), first, bytes, "write");
  const auto n = static_cast<std::size_t>(regions.size(0));
  // fflush: rows() reads the file itself, not through this FILE's buffer.
  if (std::fwrite(regions.data<float>(), bytes, n, file_.get()) != n || std::fflush(file_.get()))
    fail("RegionFile::write: cannot write {} canvases (is the temporary folder full?)", n);
}

Tensor RegionFile::rows(const std::vector<Index>& indices) const {
  if (!file_) fail("RegionFile::rows: the file was never created");
  NDArray out = NDArray::empty({static_cast<Index>(indices.size()), regions_, features_});
  const std::size_t bytes = canvas_bytes(regions_, features_);
  auto* dst = reinterpret_cast<char*>(out.data<float>());
  const int descriptor = fileno(file_.get());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= count_)
      fail("RegionFile::rows: canvas {} is outside 0..{}", indices[i], count_ - 1);
    // pread (POSIX) reads at an offset and leaves the file's position alone, so two models
    // that train side by side (lessons 09 and 10) can read their batches at the same time; a
    // seek and a read would race for the one position.
    const auto offset = static_cast<off_t>(static_cast<std::size_t>(indices[i]) * bytes);
    errno = 0;
    if (pread(descriptor, dst + i * bytes, bytes, offset) != static_cast<ssize_t>(bytes))
      fail("RegionFile::rows: cannot read canvas {} (was it written?){}", indices[i],
           errno != 0 ? fmt::format(": {}", std::strerror(errno)) : std::string());
  }
  return Tensor(out);
}

}  // namespace attend::captioning
