// IDX files: the simple array format of MNIST and Fashion-MNIST (LeCun et al.).
//
// An IDX file is a 4-byte magic number, the sizes, then the elements, all big-endian:
//
//   bytes 0-1  zero
//   byte  2    the element type: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
//              0x0D float32, 0x0E float64
//   byte  3    the number of dimensions d
//   then d sizes (uint32 each), then the elements in row-major order.
//
// MNIST ships its files gzip-compressed (.gz). read_idx reads both kinds through zlib,
// whose gzread passes plain files through unchanged, and checks that the header is sound and
// that the data has exactly the length the sizes announce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::data {

enum class IdxType : std::uint8_t {
  u8 = 0x08,
  i8 = 0x09,
  i16 = 0x0B,
  i32 = 0x0C,
  f32 = 0x0D,
  f64 = 0x0E
};

std::size_t idx_type_size(IdxType type);

// The contents of an IDX file, as stored.
struct IdxArray {
  IdxType type = IdxType::u8;
  Shape shape;
  std::vector<std::uint8_t> bytes;  // the elements, big-endian, row-major

  // The elements as an attend array of `dtype`, each multiplied by `scale` (uint8 images
  // to float32 in [0, 1]: to_array(kFloat32, 1.0 / 255)). int64 takes integer types only.
  NDArray to_array(DType dtype, double scale = 1) const;
};

// Reads an IDX file, gzip-compressed or not. With max_items > 0, reads only the first
// max_items entries along the first axis (then the rest of the file is not checked).
// Errors name the file and the problem: missing, not IDX, truncated, longer than announced.
IdxArray read_idx(const std::string& path, Index max_items = 0);

// Writes values as an IDX file of `type`, gzip-compressed if `compress`. For integer types
// every value must be a whole number in the type's range.
void write_idx(const std::string& path, const NDArray& values, IdxType type, bool compress);

}  // namespace attend::data
