#include "nn/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <system_error>

#include "tensor/error.h"

namespace attend::data {
namespace {

bool is_known_type(std::uint8_t code) {
  switch (code) {
    case 0x08:
    case 0x09:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x0E:
      return true;
    default:
      return false;
  }
}

bool is_integer_type(IdxType type) {
  return type != IdxType::f32 && type != IdxType::f64;
}

// An open gzip (or plain) file that closes itself.
class GzFile {
 public:
  GzFile(const std::string& path, const char* mode) : file_(gzopen(path.c_str(), mode)) {}
  ~GzFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  gzFile get() const { return file_; }
  // Closes the file and reports whether everything was written (for writing).
  bool close() {
    gzFile file = file_;
    file_ = nullptr;
    return gzclose(file) == Z_OK;
  }

 private:
  gzFile file_;
};

// Reads up to n bytes; fewer only at the end of the data. A damaged or cut gzip stream is an
// error, not an early end.
std::size_t read_up_to(GzFile& file, const std::string& path, std::uint8_t* out, std::size_t n) {
  std::size_t total = 0;
  while (total < n) {
    const auto chunk = static_cast<unsigned>(std::min<std::size_t>(n - total, 1u << 30));
    const int got = gzread(file.get(), out + total, chunk);
    if (got <= 0) break;
    total += static_cast<std::size_t>(got);
  }
  int error = Z_OK;
  std::string_view message = gzerror(file.get(), &error);
  // zlib reports a gzip stream that stops early as Z_BUF_ERROR ("unexpected end of file").
  if (error == Z_BUF_ERROR) fail("IDX file '{}' is truncated (its gzip stream ends early)", path);
  if (error != Z_OK) {
    // zlib's messages start with the file name, which ours already shows.
    if (message.starts_with(path + ": ")) message.remove_prefix(path.size() + 2);
    fail("IDX file '{}' is corrupt (gzip: {})", path, message);
  }
  return total;
}

std::uint32_t big_endian_u32(const std::uint8_t* b) {
  return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3];
}

std::uint64_t big_endian_u64(const std::uint8_t* b) {
  return std::uint64_t{big_endian_u32(b)} << 32 | big_endian_u32(b + 4);
}

// Element i of the stored bytes, as a number.
template <IdxType type>
double element(const std::uint8_t* bytes, std::size_t i) {
  if constexpr (type == IdxType::u8) return bytes[i];
  if constexpr (type == IdxType::i8) return static_cast<std::int8_t>(bytes[i]);
  if constexpr (type == IdxType::i16)
    return static_cast<std::int16_t>(
        static_cast<std::uint16_t>(bytes[2 * i] << 8 | bytes[2 * i + 1]));
  if constexpr (type == IdxType::i32)
    return static_cast<std::int32_t>(big_endian_u32(bytes + 4 * i));
  if constexpr (type == IdxType::f32) return std::bit_cast<float>(big_endian_u32(bytes + 4 * i));
  if constexpr (type == IdxType::f64) return std::bit_cast<double>(big_endian_u64(bytes + 8 * i));
}

// One loop per pair of types, so that each is a simple loop without a switch inside.
template <class Out, IdxType type>
void convert(const std::uint8_t* bytes, Out* out, std::size_t n, double scale) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(element<type>(bytes, i) * scale);
}

template <class Out>
void convert_any(const IdxArray& idx, Out* out, double scale) {
  const std::size_t n = static_cast<std::size_t>(idx.shape.numel());
  const std::uint8_t* b = idx.bytes.data();
  switch (idx.type) {
    case IdxType::u8:
      return convert<Out, IdxType::u8>(b, out, n, scale);
    case IdxType::i8:
      return convert<Out, IdxType::i8>(b, out, n, scale);
    case IdxType::i16:
      return convert<Out, IdxType::i16>(b, out, n, scale);
    case IdxType::i32:
      return convert<Out, IdxType::i32>(b, out, n, scale);
    case IdxType::f32:
      return convert<Out, IdxType::f32>(b, out, n, scale);
    case IdxType::f64:
      return convert<Out, IdxType::f64>(b, out, n, scale);
  }
}

// Big-endian bytes of value as `type`, checking that the type can hold it.
void encode(double value, IdxType type, std::uint8_t* out, const std::string& path) {
  double low = 0, high = 0;
  switch (type) {
    case IdxType::u8:
      low = 0, high = 255;
      break;
    case IdxType::i8:
      low = -128, high = 127;
      break;
    case IdxType::i16:
      low = -32768, high = 32767;
      break;
    case IdxType::i32:
      low = -2147483648.0, high = 2147483647.0;
      break;
    case IdxType::f32:
    case IdxType::f64:
      break;
  }
  if (is_integer_type(type) && !(value >= low && value <= high && value == std::floor(value)))
    fail("write_idx '{}': {} cannot be stored as IDX type 0x{:02X} (whole numbers {} to {})", path,
         value, static_cast<int>(type), low, high);
  std::uint64_t bits = 0;
  std::size_t size = idx_type_size(type);
  if (type == IdxType::f32)
    bits = std::bit_cast<std::uint32_t>(static_cast<float>(value));
  else if (type == IdxType::f64)
    bits = std::bit_cast<std::uint64_t>(value);
  else
    bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
  for (std::size_t i = 0; i < size; ++i)
    out[i] = static_cast<std::uint8_t>(bits >> (8 * (size - 1 - i)));
}

}  // namespace

std::size_t idx_type_size(IdxType type) {
  switch (type) {
    case IdxType::u8:
    case IdxType::i8:
      return 1;
    case IdxType::i16:
      return 2;
    case IdxType::i32:
    case IdxType::f32:
      return 4;
    case IdxType::f64:
      return 8;
  }
  fail("idx_type_size: unknown IDX type 0x{:02X}", static_cast<int>(type));
}

NDArray IdxArray::to_array(DType dtype, double scale) const {
  if (bytes.size() != static_cast<std::size_t>(shape.numel()) * idx_type_size(type))
    fail("IdxArray::to_array: {} bytes do not match shape {}", bytes.size(), shape);
  NDArray out = NDArray::empty(shape, dtype);
  switch (dtype) {
    case DType::f32:
      convert_any(*this, out.data<float>(), scale);
      break;
    case DType::f64:
      convert_any(*this, out.data<double>(), scale);
      break;
    case DType::i64:
      if (!is_integer_type(type) || scale != 1)
        fail(
            "IdxArray::to_array: int64 needs integer IDX data and scale 1 (type 0x{:02X}, "
            "scale {})",
            static_cast<int>(type), scale);
      convert_any(*this, out.data<std::int64_t>(), 1.0);
      break;
  }
  return out;
}

IdxArray read_idx(const std::string& path, Index max_items) {
  if (std::filesystem::is_directory(path)) fail("cannot open IDX file '{}': it is a folder", path);
  errno = 0;
  GzFile file(path, "rb");
  if (file.get() == nullptr)
    fail("cannot open IDX file '{}': {}", path,
         std::system_category().message(errno != 0 ? errno : ENOENT));

  std::uint8_t magic[4];
  std::size_t got = read_up_to(file, path, magic, 4);
  if (got < 4)
    fail("IDX file '{}' is truncated (expected 4 bytes of magic number, found {})", path, got);
  if (magic[0] != 0 || magic[1] != 0)
    fail(
        "'{}' is not an IDX file (its magic number {:02X} {:02X} {:02X} {:02X} does not start "
        "with two zero bytes)",
        path, magic[0], magic[1], magic[2], magic[3]);
  if (!is_known_type(magic[2]))
    fail("IDX file '{}' has unknown element type 0x{:02X} (known: 0x08 0x09 0x0B 0x0C 0x0D 0x0E)",
         path, magic[2]);
  const int ndim = magic[3];
  if (ndim == 0 || ndim > Shape::kMaxDims)
    fail("IDX file '{}' has {} dimensions; attend reads 1 to {}", path, ndim, Shape::kMaxDims);

  IdxArray idx;
  idx.type = static_cast<IdxType>(magic[2]);
  std::vector<std::uint8_t> size_bytes(static_cast<std::size_t>(4 * ndim));
  got = read_up_to(file, path, size_bytes.data(), size_bytes.size());
  if (got < size_bytes.size())
    fail("IDX file '{}' is truncated (expected {} bytes of sizes, found {})", path,
         size_bytes.size(), got);
  // Limit the announced size, so that a damaged header cannot ask for petabytes.
  constexpr Index kMaxElements = Index{1} << 40;
  Index numel = 1;
  for (int d = 0; d < ndim; ++d) {
    const Index size = big_endian_u32(size_bytes.data() + 4 * d);
    idx.shape.push_back(size);
    if (size != 0 && numel > kMaxElements / size)
      numel = kMaxElements + 1;  // too large; reported below
    else
      numel *= size;
  }
  if (numel > kMaxElements)
    fail("IDX file '{}' announces shape {}: too large to be real (the header is damaged)", path,
         idx.shape);

  const bool partial = max_items > 0 && max_items < idx.shape[0];
  const Shape full_shape = idx.shape;
  if (partial) idx.shape[0] = max_items;
  const std::size_t expected =
      static_cast<std::size_t>(idx.shape.numel()) * idx_type_size(idx.type);
  // Grow as data arrives rather than trusting the header with one huge allocation: from
  // 64 KiB, doubling up to 16 MiB at a time (a damaged header cost 16 MiB per file before).
  constexpr std::size_t kMaxChunk = std::size_t{16} << 20;
  std::size_t have = 0, chunk = std::size_t{1} << 16;
  while (have < expected) {
    idx.bytes.resize(std::min(expected, have + chunk));
    const std::size_t n = read_up_to(file, path, idx.bytes.data() + have, idx.bytes.size() - have);
    have += n;
    if (have < idx.bytes.size()) break;
    chunk = std::min(2 * chunk, kMaxChunk);
  }
  if (have < expected)
    fail("IDX file '{}' is truncated (expected {} bytes of data for shape {}, found {})", path,
         expected, idx.shape, have);
  if (!partial) {
    std::uint8_t extra = 0;
    if (read_up_to(file, path, &extra, 1) != 0)
      fail(
          "IDX file '{}' is longer than its header says (more than {} bytes of data for shape "
          "{})",
          path, expected, full_shape);
  }
  return idx;
}

void write_idx(const std::string& path, const NDArray& values, IdxType type, bool compress) {
  check_defined(values, "write_idx", "values");
  if (!is_known_type(static_cast<std::uint8_t>(type)))
    fail("write_idx '{}': unknown IDX type 0x{:02X}", path, static_cast<int>(type));
  if (values.ndim() == 0) fail("write_idx '{}': IDX needs at least one axis", path);
  std::vector<std::uint8_t> bytes = {0, 0, static_cast<std::uint8_t>(type),
                                     static_cast<std::uint8_t>(values.ndim())};
  for (Index size : values.shape()) {
    if (size > std::numeric_limits<std::uint32_t>::max())
      fail("write_idx '{}': size {} does not fit IDX's 32 bits", path, size);
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(size) >> shift));
  }
  const std::size_t header = bytes.size(), element_size = idx_type_size(type);
  const std::vector<double> numbers = values.to_vector();
  bytes.resize(header + numbers.size() * element_size);
  for (std::size_t i = 0; i < numbers.size(); ++i)
    encode(numbers[i], type, bytes.data() + header + i * element_size, path);

  errno = 0;
  // "T" writes the bytes as they are ("transparent"), without gzip.
  GzFile file(path, compress ? "wb" : "wbT");
  if (file.get() == nullptr)
    fail("cannot create IDX file '{}': {}", path,
         std::system_category().message(errno != 0 ? errno : EIO));
  std::size_t written = 0;
  while (written < bytes.size()) {
    const auto chunk =
        static_cast<unsigned>(std::min<std::size_t>(bytes.size() - written, 1u << 30));
    if (gzwrite(file.get(), bytes.data() + written, chunk) != static_cast<int>(chunk)) {
      int error = Z_OK;
      fail("cannot write IDX file '{}': {}", path, gzerror(file.get(), &error));
    }
    written += chunk;
  }
  if (!file.close()) fail("cannot write IDX file '{}': closing it failed", path);
}

}  // namespace attend::data
