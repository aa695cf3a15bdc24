#include "nn/io/checkpoint_file.h"

#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "nn/io/atomic_file.h"
#include "tensor/error.h"

namespace attend::nn {
namespace {

// ---- dtypes and byte order -----------------------------------------------------------------
// The file has its own dtype codes, so that reordering DType in the code can never change
// what old files mean. 0 is left unused: a zeroed byte is not a valid dtype.
std::uint8_t dtype_code(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 1;
    case DType::f64:
      return 2;
    case DType::i64:
      return 3;
  }
  fail("checkpoint: unknown dtype {}", static_cast<int>(dtype));
}

bool dtype_from_code(std::uint8_t code, DType& dtype) {
  switch (code) {
    case 1:
      dtype = DType::f32;
      return true;
    case 2:
      dtype = DType::f64;
      return true;
    case 3:
      dtype = DType::i64;
      return true;
    default:
      return false;
  }
}

// Integers are written one byte at a time, lowest byte first, which is little-endian on
// every machine. Array data is copied as it is in memory on little-endian machines (all
// common ones) and byte-swapped element by element on big-endian ones.
template <class T>
void append_le(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i)));
}

template <class T>
T decode_le(const unsigned char* bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
  return static_cast<T>(value);
}

void reverse_each_element(unsigned char* bytes, std::size_t count, std::size_t element_size) {
  for (std::size_t i = 0; i < count; ++i)
    std::reverse(bytes + i * element_size, bytes + (i + 1) * element_size);
}

// CRC-32 (the one of zip and PNG) over a buffer of any length.
std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(bytes)));
}

// Sizes of one array, in elements and bytes, refusing shapes whose size overflows. The
// product of the sizes other than zero is bounded too: [0, 2^40, 2^40] holds no bytes, but
// its strides would not fit in an Index, and neither would a single size of 2^63.
constexpr std::uint64_t kMaxArrayBytes = std::uint64_t{1} << 62;

bool array_bytes(std::span<const std::uint64_t> sizes, std::size_t element_size,
                 std::uint64_t& bytes) {
  std::uint64_t nonzero = element_size;
  bool empty = false;
  for (std::uint64_t s : sizes) {
    if (s == 0) {
      empty = true;
      continue;
    }
    if (nonzero > kMaxArrayBytes / s) return false;
    nonzero *= s;
  }
  bytes = empty ? 0 : nonzero;
  return true;
}

// ---- writing ----------------------------------------------------------------------------------
// The bytes of an entry before its data: name length, name, dtype, rank, sizes.
std::string entry_header(const CheckpointEntry& entry) {
  std::string out;
  append_le(out, static_cast<std::uint32_t>(entry.name.size()));
  out += entry.name;
  out.push_back(static_cast<char>(dtype_code(entry.value.dtype())));
  out.push_back(static_cast<char>(entry.value.ndim()));
  for (Index size : entry.value.shape()) append_le(out, static_cast<std::uint64_t>(size));
  return out;
}

void check_entries(const std::string& path, std::span<const CheckpointEntry> entries) {
  std::set<std::string_view> seen;
  for (const CheckpointEntry& entry : entries) {
    if (entry.name.empty() || entry.name.size() > kCheckpointMaxNameBytes)
      fail("cannot save checkpoint '{}': entry names must have 1 to {} bytes, got {} bytes", path,
           kCheckpointMaxNameBytes, entry.name.size());
    if (!seen.insert(entry.name).second)
      fail("cannot save checkpoint '{}': two entries are named '{}'", path, entry.name);
    if (!entry.value.defined())
      fail("cannot save checkpoint '{}': {} is undefined", path, describe_entry(entry.name));
  }
}

// A writer that keeps the running checksum of everything it writes.
struct ChecksummedWriter {
  AtomicFileWriter& file;
  std::uint32_t crc = 0;
  std::uint64_t written = 0;
  void write(const void* data, std::size_t bytes) {
    // An empty array may have no memory at all, and zlib's crc32 of a null pointer is 0,
    // not "unchanged": skip empty writes.
    if (bytes == 0) return;
    crc = crc32_update(crc, data, bytes);
    written += bytes;
    file.write(data, bytes);
  }
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
};

void write_array_data(ChecksummedWriter& out, const NDArray& value) {
  if constexpr (std::endian::native == std::endian::little) {
    out.write(value.raw_data(), value.nbytes());
  } else {
    std::vector<unsigned char> swapped(value.nbytes());
    std::memcpy(swapped.data(), value.raw_data(), swapped.size());
    reverse_each_element(swapped.data(), static_cast<std::size_t>(value.numel()),
                         dtype_size(value.dtype()));
    out.write(swapped.data(), swapped.size());
  }
}

// ---- reading ----------------------------------------------------------------------------------
// Walks through the file's bytes; take() hands out the next n bytes, or reports the file as
// truncated, naming what it was reading.
class ByteReader {
 public:
  ByteReader(const std::string& path, std::span<const unsigned char> bytes)
      : path_(path), bytes_(bytes) {}

  const unsigned char* take(std::uint64_t n, std::string_view what) {
    const std::uint64_t left = bytes_.size() - offset_;
    if (n > left)
      fail("checkpoint '{}' is truncated (expected {} bytes of {}, found {})", path_, n, what,
           left);
    const unsigned char* p = bytes_.data() + offset_;
    offset_ += static_cast<std::size_t>(n);
    return p;
  }
  template <class T>
  T take_le(std::string_view what) {
    return decode_le<T>(take(sizeof(T), what));
  }
  std::size_t offset() const { return offset_; }

 private:
  const std::string& path_;
  std::span<const unsigned char> bytes_;
  std::size_t offset_ = 0;
};

std::vector<unsigned char> read_whole_file(const std::string& path) {
  if (std::filesystem::is_directory(path))
    fail("cannot open checkpoint '{}': it is a folder, not a file", path);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr)
    fail("cannot open checkpoint '{}': {}", path, std::system_category().message(errno));
  // In chunks, so that memory grows with the bytes that are there (not with what the file
  // claims), and a small file costs a small read.
  std::vector<unsigned char> bytes, chunk(std::size_t{1} << 16);
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0)
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
  const bool read_error = std::ferror(file) != 0;
  std::fclose(file);
  if (read_error) fail("cannot read checkpoint '{}': a read error occurred", path);
  return bytes;
}

// Reads the entries after the header. Every length is checked against the bytes that are
// left, so a truncated file fails with a message naming the piece that is cut.
std::vector<CheckpointEntry> parse_entries(const std::string& path, ByteReader& in,
                                           std::uint32_t count) {
  std::vector<CheckpointEntry> entries;
  std::set<std::string> seen;
  for (std::uint32_t e = 0; e < count; ++e) {
    const std::string entry_label = fmt::format("entry {}", e);
    const auto name_length = in.take_le<std::uint32_t>("the name length of " + entry_label);
    if (name_length == 0 || name_length > kCheckpointMaxNameBytes)
      fail("checkpoint '{}' is corrupt: {} has a name of {} bytes (allowed: 1 to {})", path,
           entry_label, name_length, kCheckpointMaxNameBytes);
    const unsigned char* name_bytes = in.take(name_length, "the name of " + entry_label);
    std::string name(reinterpret_cast<const char*>(name_bytes), name_length);
    const std::string what = describe_entry(name);

    const std::uint8_t code = in.take_le<std::uint8_t>("the dtype of " + what);
    DType dtype{};
    if (!dtype_from_code(code, dtype))
      fail("checkpoint '{}' is corrupt: {} has unknown dtype code {}", path, what, code);
    const std::uint8_t rank = in.take_le<std::uint8_t>("the rank of " + what);
    if (rank > Shape::kMaxDims)
      fail("checkpoint '{}' is corrupt: {} has {} dimensions (at most {})", path, what, rank,
           Shape::kMaxDims);
    std::vector<std::uint64_t> sizes(rank);
    for (auto& s : sizes) s = in.take_le<std::uint64_t>("the shape of " + what);
    std::uint64_t data_bytes = 0;
    if (!array_bytes(sizes, dtype_size(dtype), data_bytes))
      fail("checkpoint '{}' is corrupt: {} has an impossibly large shape [{}]", path, what,
           fmt::join(sizes, ", "));
    const unsigned char* data = in.take(data_bytes, what);

    if (!seen.insert(name).second)
      fail("checkpoint '{}' is corrupt: two entries are named '{}'", path, name);
    Shape shape;
    for (std::uint64_t s : sizes) shape.push_back(static_cast<Index>(s));
    NDArray value = NDArray::empty(shape, dtype);
    if (data_bytes > 0) std::memcpy(value.raw_data(), data, static_cast<std::size_t>(data_bytes));
    if constexpr (std::endian::native == std::endian::big)
      reverse_each_element(static_cast<unsigned char*>(value.raw_data()),
                           static_cast<std::size_t>(value.numel()), dtype_size(dtype));
    entries.push_back({std::move(name), std::move(value)});
  }
  return entries;
}

}  // namespace

std::string describe_entry(std::string_view name) {
  if (name.starts_with(kModelPrefix))
    return fmt::format("parameter '{}'", name.substr(kModelPrefix.size()));
  if (name == kOptimizerStepsEntry) return "the optimizer's step count";
  if (name.starts_with(kOptimizerPrefix))
    return fmt::format("optimizer state '{}'", name.substr(kOptimizerPrefix.size()));
  if (name == kStepEntry) return "the training step";
  if (name == kGeneratorEntry) return "the random generator state";
  return fmt::format("entry '{}'", name);
}

void write_checkpoint_file(const std::string& path, std::span<const CheckpointEntry> entries) {
  check_entries(path, entries);
  if (entries.size() > UINT32_MAX) fail("cannot save checkpoint '{}': too many entries", path);

  // The header stores the size of the whole file, so add it up first.
  std::vector<std::string> entry_headers;
  std::uint64_t file_size = kCheckpointHeaderBytes + sizeof(std::uint32_t);  // + checksum
  for (const CheckpointEntry& entry : entries) {
    entry_headers.push_back(entry_header(entry));
    file_size += entry_headers.back().size() + entry.value.nbytes();
  }
  std::string header(kCheckpointMagic);
  append_le(header, kCheckpointVersion);
  append_le(header, file_size);
  append_le(header, static_cast<std::uint32_t>(entries.size()));

  AtomicFileWriter file(path);
  ChecksummedWriter out{file};
  out.write(header);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out.write(entry_headers[i]);
    write_array_data(out, entries[i].value);
  }
  std::string checksum;
  append_le(checksum, out.crc);
  out.write(checksum);
  if (out.written != file_size)
    fail("cannot save checkpoint '{}': wrote {} bytes instead of {}", path, out.written, file_size);
  file.commit();
}

std::vector<CheckpointEntry> read_checkpoint_file(const std::string& path) {
  const std::vector<unsigned char> bytes = read_whole_file(path);
  ByteReader in(path, bytes);

  // 1. Is this a checkpoint at all?
  const unsigned char* magic = in.take(kCheckpointMagic.size(), "magic number");
  if (std::memcmp(magic, kCheckpointMagic.data(), kCheckpointMagic.size()) != 0)
    fail("'{}' is not an attend checkpoint (it does not start with the magic number \"{}\")", path,
         kCheckpointMagic);
  const auto version = in.take_le<std::uint32_t>("format version");
  const auto declared_size = in.take_le<std::uint64_t>("file size");
  const auto count = in.take_le<std::uint32_t>("entry count");

  // 2. Shorter than its header says: truncated. Walking through the entries names the piece
  //    that is cut. (Should the walk get through, the size field itself is damaged, which
  //    the checksum below reports.)
  if (bytes.size() < declared_size) {
    if (version != kCheckpointVersion)
      fail("checkpoint '{}' is truncated (expected {} bytes, found {})", path, declared_size,
           bytes.size());
    parse_entries(path, in, count);
    in.take(sizeof(std::uint32_t), "checksum");
  }

  // 3. Any changed byte: checksum mismatch. Checked before the version, so that a damaged
  //    version number is reported as damage, not as a file from the future.
  const std::size_t body = bytes.size() - sizeof(std::uint32_t);
  const auto stored = decode_le<std::uint32_t>(bytes.data() + body);
  const std::uint32_t computed = crc32_update(0, bytes.data(), body);
  if (stored != computed)
    fail(
        "checkpoint '{}': checksum mismatch: the file is corrupt (stored CRC-32 {:08x}, computed "
        "{:08x})",
        path, stored, computed);

  // 4. A sound file, but written in a format this build does not know.
  if (version != kCheckpointVersion)
    fail("checkpoint '{}' has format version {}, but this build of attend reads version {}{}", path,
         version, kCheckpointVersion,
         version > kCheckpointVersion ? " (it was written by a newer attend: update attend)" : "");
  if (bytes.size() != declared_size)
    fail("checkpoint '{}' is corrupt: its header says {} bytes, but the file has {}", path,
         declared_size, bytes.size());

  // 5. The entries, which must end exactly at the checksum.
  std::vector<CheckpointEntry> entries = parse_entries(path, in, count);
  if (in.offset() != body)
    fail("checkpoint '{}' is corrupt: {} unexpected bytes after the last entry", path,
         body - in.offset());
  return entries;
}

}  // namespace attend::nn
