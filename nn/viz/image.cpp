#include "nn/viz/image.h"

#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {
namespace {

// Images larger than this per side are refused: stb counts pixels in int, and a typo such
// as resize_bilinear(x, 64000, 64000) should be an error, not 16 GB of memory.
constexpr Index kMaxSide = 1 << 15;

// And no more pixels than this in all (8192 x 8192): the float array of such an image is
// already 768 MB.
constexpr Index kMaxPixels = Index{1} << 26;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
struct StbFree {
  void operator()(unsigned char* pixels) const { stbi_image_free(pixels); }
};

// Image [C, H, W] or [H, W] -> its sizes, checking what every image function needs.
struct ImageShape {
  Index channels, height, width;
};
ImageShape image_shape(const NDArray& image, std::string_view op) {
  check_defined(image, op, "image");
  if (!is_floating(image.dtype())) {
    fail("{}: the image must be float32 or float64, not {}", op, dtype_name(image.dtype()));
  }
  if (image.ndim() != 2 && image.ndim() != 3) {
    fail("{}: an image is [C, H, W] or [H, W], not {}", op, to_string(image.shape()));
  }
  ImageShape s{image.ndim() == 3 ? image.size(0) : 1, image.size(-2), image.size(-1)};
  if (s.height < 1 || s.width < 1 || s.channels < 1) {
    fail("{}: the image {} is empty", op, to_string(image.shape()));
  }
  if (s.height > kMaxSide || s.width > kMaxSide) {
    fail("{}: the image {} is larger than {} pixels per side", op, to_string(image.shape()),
         kMaxSide);
  }
  return s;
}

// The linear (tent) filter along one axis: output pixel o is the sum over k of
// weights[o][k] * input[first[o] + k].
struct AxisFilter {
  std::vector<Index> first;
  std::vector<std::vector<double>> weights;
};

AxisFilter linear_filter(Index in_size, Index out_size) {
  // Pixel centres sit at half-integers: output pixel o covers input coordinates
  // [o * scale, (o + 1) * scale), so its centre is at (o + 0.5) * scale - 0.5 in input pixel
  // indices. The same convention makes a 2x enlargement symmetric at both edges.
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  // The tent reaches 1 input pixel either side when enlarging (plain bilinear), and `scale`
  // pixels when shrinking, so every input pixel under the output pixel contributes.
  const double radius = std::max(1.0, scale);
  AxisFilter filter;
  for (Index o = 0; o < out_size; ++o) {
    const double centre = (static_cast<double>(o) + 0.5) * scale - 0.5;
    const Index lo = std::max<Index>(0, static_cast<Index>(std::floor(centre - radius)));
    const Index hi = std::min<Index>(in_size - 1, static_cast<Index>(std::ceil(centre + radius)));
    std::vector<double> w;
    double total = 0;
    for (Index i = lo; i <= hi; ++i) {
      w.push_back(std::max(0.0, 1.0 - std::abs(static_cast<double>(i) - centre) / radius));
      total += w.back();
    }
    // Taps that fall outside the image are left out and the rest renormalised: at the
    // border this repeats the edge pixel, and the weights always sum to 1.
    for (double& x : w) x /= total;
    filter.first.push_back(lo);
    filter.weights.push_back(std::move(w));
  }
  return filter;
}

// stb's failure reasons are terse ("outofdata"); each gets a plain explanation.
std::string explain(const char* reason, bool read_past_end) {
  const std::string_view r = reason != nullptr ? reason : "unknown failure";
  if (r == "outofdata" || read_past_end)
    return std::string(r) + " (the data ends too early: is the file truncated?)";
  if (r == "unknown image type") {
    return "unknown image type (stb_image reads PNG, JPEG, BMP, GIF, TGA, PSD, HDR, PIC and "
           "PNM files)";
  }
  return std::string(r) + " (is the file corrupt?)";
}

// stb_image 2.27 writes past its Huffman table when a JPEG's DHT segment declares more than
// 256 codes (an out-of-bounds write found by tests/fuzz under ASan): such tables are refused
// here, before stb sees them. Walks the segments up to the first scan (SOS).
bool jpeg_huffman_tables_fit(const std::vector<unsigned char>& b) {
  if (b.size() < 2 || b[0] != 0xFF || b[1] != 0xD8) return true;  // not a JPEG
  std::size_t at = 2;
  while (at + 4 <= b.size() && b[at] == 0xFF) {
    const unsigned char marker = b[at + 1];
    const std::size_t length = std::size_t{b[at + 2]} << 8 | b[at + 3];
    if (marker == 0xDA || length < 2) break;  // the scan: tables come before it
    const std::size_t end = std::min(b.size(), at + 2 + length);
    for (std::size_t t = at + 4; marker == 0xC4 && t + 17 <= end;) {
      std::size_t codes = 0;
      for (std::size_t i = 1; i <= 16; ++i) codes += b[t + i];
      if (codes > 256) return false;
      t += 17 + codes;
    }
    at += 2 + length;
  }
  return true;
}

// stb_image 2.27 reads a PNM header's numbers (width, height, maximum value) into an int
// without checking for overflow (UBSan, tests/fuzz): a number of more than 9 digits is refused
// here. Walks the header as stb does: whitespace and '#' comments, then digits, three times.
bool pnm_header_numbers_fit(const std::vector<unsigned char>& b) {
  if (b.size() < 2 || b[0] != 'P' || (b[1] != '5' && b[1] != '6')) return true;  // not PNM
  std::size_t at = 2;
  for (int number = 0; number < 3; ++number) {
    while (at < b.size() && (std::isspace(b[at]) != 0 || b[at] == '#')) {
      if (b[at] == '#') {
        while (at < b.size() && b[at] != '\n' && b[at] != '\r') ++at;
      } else {
        ++at;
      }
    }
    std::size_t digits = 0;
    for (; at < b.size() && b[at] >= '0' && b[at] <= '9'; ++at) ++digits;
    if (digits > 9) return false;
  }
  return true;
}

// The whole file, or an Error naming it.
std::vector<unsigned char> read_file(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    fail("read_image: '{}' is a folder, not an image file", path.string());
  }
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) fail("read_image: cannot open '{}': {}", path.string(), std::strerror(errno));
  std::vector<unsigned char> bytes, chunk(std::size_t{1} << 16);
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file.get())) > 0)
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
  if (std::ferror(file.get()) != 0) fail("read_image: cannot read '{}'", path.string());
  return bytes;
}

// The file's bytes, handed to stb through its reading callbacks, which note whether stb asked
// for bytes after the end. stb reads past the end as zeros, so a GIF, JPEG, BMP, TGA or PNM
// cut short decodes without an error to a picture whose missing part is blank. A decoder that
// reads a complete file never asks for more; asking means the file is cut. stb asks in two
// ways: it refills its own 128-byte buffer (the first read of all; near the end of the file
// that read is short, which is no sign of anything), and it reads a block it needs whole
// straight into its own memory (a short read there means missing bytes). (stb's format checks
// before the decoder read a file's first bytes, and past its signature only if that matches:
// they can flag only a file shorter than its own header.)
struct StbReader {
  std::vector<unsigned char> bytes;
  std::size_t position = 0;
  bool read_past_end = false;
  const char* stb_buffer = nullptr;

  void restart() {
    position = 0;
    read_past_end = false;
    stb_buffer = nullptr;
  }
  static int read(void* user, char* out, int size) {
    StbReader& r = *static_cast<StbReader*>(user);
    if (r.stb_buffer == nullptr) r.stb_buffer = out;
    const std::size_t n = std::min(r.bytes.size() - r.position, static_cast<std::size_t>(size));
    const bool refill = out == r.stb_buffer;
    if (n < static_cast<std::size_t>(size) && (n == 0 || !refill)) r.read_past_end = true;
    if (n > 0) std::memcpy(out, r.bytes.data() + r.position, n);
    r.position += n;
    return static_cast<int>(n);
  }
  static void skip(void* user, int n) {  // n < 0 steps back
    StbReader& r = *static_cast<StbReader*>(user);
    const auto step = static_cast<std::size_t>(n < 0 ? -static_cast<Index>(n) : n);
    if (n < 0) {
      r.position -= std::min(r.position, step);
    } else if (step > r.bytes.size() - r.position) {
      r.read_past_end = true;
      r.position = r.bytes.size();
    } else {
      r.position += step;
    }
  }
  static int eof(void* user) {
    const StbReader& r = *static_cast<const StbReader*>(user);
    return r.position >= r.bytes.size() ? 1 : 0;
  }
  static constexpr stbi_io_callbacks kCallbacks = {read, skip, eof};
};

}  // namespace

NDArray read_image(const std::filesystem::path& path, ColorMode mode) {
  StbReader reader;
  reader.bytes = read_file(path);
  // stb 2.27 also negates a BMP's height (bottom-up rows) without checking for INT_MIN,
  // an overflow (UBSan, tests/fuzz): refused here.
  const std::vector<unsigned char>& b = reader.bytes;
  if (b.size() >= 26 && b[0] == 'B' && b[1] == 'M' && b[22] == 0 && b[23] == 0 && b[24] == 0 &&
      b[25] == 0x80) {
    fail("read_image: cannot decode '{}': a BMP height of -2^31 (is the file corrupt?)",
         path.string());
  }
  if (!jpeg_huffman_tables_fit(reader.bytes)) {
    fail(
        "read_image: cannot decode '{}': a Huffman table of more than 256 codes (is the file "
        "corrupt?)",
        path.string());
  }
  if (!pnm_header_numbers_fit(reader.bytes)) {
    fail(
        "read_image: cannot decode '{}': a PNM header number of more than 9 digits (is the "
        "file corrupt?)",
        path.string());
  }
  // The size first, from the header alone: a damaged header must not make stb allocate
  // gigabytes before it finds out that the pixels are not there.
  int width = 0, height = 0, channels_in_file = 0;
  if (stbi_info_from_callbacks(&StbReader::kCallbacks, &reader, &width, &height,
                               &channels_in_file) == 0) {
    fail("read_image: cannot decode '{}': {}", path.string(),
         explain(stbi_failure_reason(), reader.read_past_end));
  }
  if (width > kMaxSide || height > kMaxSide || Index{width} * height > kMaxPixels) {
    fail("read_image: '{}' is {}x{} pixels; read_image reads at most {} per side and {} in all",
         path.string(), width, height, kMaxSide, kMaxPixels);
  }
  reader.restart();
  const int channels = mode == ColorMode::kGray ? 1 : 3;
  // The last argument asks stb to convert to `channels` whatever the file holds.
  std::unique_ptr<unsigned char, StbFree> pixels(stbi_load_from_callbacks(
      &StbReader::kCallbacks, &reader, &width, &height, &channels_in_file, channels));
  if (!pixels) {
    fail("read_image: cannot decode '{}': {}", path.string(),
         explain(stbi_failure_reason(), reader.read_past_end));
  }
  if (reader.read_past_end) {
    fail("read_image: '{}' is truncated: its {} bytes end before the last pixel", path.string(),
         reader.bytes.size());
  }

  // stb gives interleaved bytes (row by row, pixel by pixel, r g b r g b ...); the array is
  // channels first: all of red, then all of green, then all of blue.
  NDArray image = NDArray::empty({channels, height, width}, kFloat32);
  float* out = image.data<float>();
  const Index plane = static_cast<Index>(height) * width;
  for (Index p = 0; p < plane; ++p) {
    for (int c = 0; c < channels; ++c) {
      out[c * plane + p] = static_cast<float>(pixels.get()[p * channels + c]) / 255.0f;
    }
  }
  return image;
}

namespace {

// The image's pixels as interleaved bytes (r g b r g b ..., row by row), what stb writes.
// op and file name the caller in the errors.
std::vector<unsigned char> pixel_bytes(const NDArray& image, std::string_view op,
                                       const std::string& file) {
  const ImageShape s = image_shape(image, op);
  if (s.channels != 1 && s.channels != 3 && s.channels != 4) {
    fail("{}: the image {} has {} channels; a PNG has 1 (gray), 3 (RGB) or 4 (RGBA)", op,
         to_string(image.shape()), s.channels);
  }
  const NDArray values = image.to(kFloat64);
  std::span<const double> v = values.span<double>();
  const Index plane = s.height * s.width;
  std::vector<unsigned char> bytes(static_cast<std::size_t>(plane * s.channels));
  for (Index c = 0; c < s.channels; ++c) {
    for (Index p = 0; p < plane; ++p) {
      const double x = v[c * plane + p];
      if (!std::isfinite(x)) {
        fail("{}: '{}': the image has a non-finite value ({}) at channel {}, row {}, column {}", op,
             file, x, c, p / s.width, p % s.width);
      }
      bytes[p * s.channels + c] =
          static_cast<unsigned char>(std::lround(std::clamp(x, 0.0, 1.0) * 255.0));
    }
  }
  return bytes;
}

}  // namespace

void write_png(const std::filesystem::path& path, const NDArray& image) {
  const std::vector<unsigned char> bytes = pixel_bytes(image, "write_png", path.string());
  const ImageShape s = image_shape(image, "write_png");
  make_parent_folders(path, "write_png");
  const int stride = static_cast<int>(s.width * s.channels);  // bytes per row
  if (stbi_write_png(path.c_str(), static_cast<int>(s.width), static_cast<int>(s.height),
                     static_cast<int>(s.channels), bytes.data(), stride) == 0) {
    fail("write_png: cannot write '{}' (is the folder writable?)", path.string());
  }
}

std::string encode_png(const NDArray& image) {
  const std::vector<unsigned char> bytes = pixel_bytes(image, "encode_png", "in memory");
  const ImageShape s = image_shape(image, "encode_png");
  std::string file;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                               static_cast<std::size_t>(size));
  };
  if (stbi_write_png_to_func(append, &file, static_cast<int>(s.width), static_cast<int>(s.height),
                             static_cast<int>(s.channels), bytes.data(),
                             static_cast<int>(s.width * s.channels)) == 0) {
    fail("encode_png: stb could not encode the image {}", to_string(image.shape()));
  }
  return file;
}

NDArray resize_bilinear(const NDArray& image, Index height, Index width) {
  const ImageShape s = image_shape(image, "resize_bilinear");
  if (height < 1 || width < 1 || height > kMaxSide || width > kMaxSide) {
    fail("resize_bilinear: the new size {}x{} must be between 1 and {} per side", height, width,
         kMaxSide);
  }
  const NDArray input = image.to(kFloat64);
  std::span<const double> in = input.span<double>();
  const AxisFilter along_x = linear_filter(s.width, width);
  const AxisFilter along_y = linear_filter(s.height, height);

  // Separable: first every row to the new width, then every column to the new height.
  std::vector<double> rows(static_cast<std::size_t>(s.channels * s.height * width));
  for (Index c = 0; c < s.channels; ++c) {
    for (Index y = 0; y < s.height; ++y) {
      const double* src = in.data() + (c * s.height + y) * s.width;
      double* dst = rows.data() + (c * s.height + y) * width;
      for (Index x = 0; x < width; ++x) {
        const std::vector<double>& w = along_x.weights[x];
        double sum = 0;
        for (std::size_t k = 0; k < w.size(); ++k) sum += w[k] * src[along_x.first[x] + k];
        dst[x] = sum;
      }
    }
  }
  std::vector<double> out(static_cast<std::size_t>(s.channels * height * width));
  for (Index c = 0; c < s.channels; ++c) {
    for (Index y = 0; y < height; ++y) {
      const std::vector<double>& w = along_y.weights[y];
      double* dst = out.data() + (c * height + y) * width;
      for (Index x = 0; x < width; ++x) {
        double sum = 0;
        for (std::size_t k = 0; k < w.size(); ++k) {
          sum += w[k] * rows[(c * s.height + along_y.first[y] + static_cast<Index>(k)) * width + x];
        }
        dst[x] = sum;
      }
    }
  }
  Shape shape = image.ndim() == 3 ? Shape{s.channels, height, width} : Shape{height, width};
  return NDArray::from_vector(std::span<const double>(out), shape).to(image.dtype());
}

void paste(NDArray& canvas, const NDArray& tile, Index x, Index y) {
  if (canvas.ndim() != 3 || tile.ndim() != 3 || canvas.size(0) != 3 || tile.size(0) != 3 ||
      canvas.dtype() != kFloat32 || tile.dtype() != kFloat32)
    fail("paste: needs float32 RGB pictures [3, H, W], got canvas {} and tile {}", canvas.shape(),
         tile.shape());
  const Index height = canvas.size(1), width = canvas.size(2);
  const Index tile_height = tile.size(1), tile_width = tile.size(2);
  if (x < 0 || y < 0 || x + tile_width > width || y + tile_height > height)
    fail("paste: a tile {} at ({}, {}) does not fit in a canvas {}", tile.shape(), x, y,
         canvas.shape());
  float* dst = canvas.data<float>();
  const float* src = tile.data<float>();
  for (Index c = 0; c < 3; ++c)
    for (Index row = 0; row < tile_height; ++row)
      std::copy_n(src + (c * tile_height + row) * tile_width, tile_width,
                  dst + (c * height + y + row) * width + x);
}

}  // namespace attend::viz
