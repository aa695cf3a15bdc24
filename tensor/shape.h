// Shape: the sizes of an array's dimensions, stored inline (no heap allocation) because
// every operation creates one. Also the rules that relate shapes: NumPy broadcasting,
// negative axes, and row-major strides.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace attend {

using Index = std::int64_t;

class Shape {
 public:
  static constexpr int kMaxDims = 8;

  Shape() = default;
  Shape(std::initializer_list<Index> dims);
  explicit Shape(std::span<const Index> dims);

  int ndim() const { return ndim_; }
  Index operator[](int axis) const { return dims_[axis]; }
  Index& operator[](int axis) { return dims_[axis]; }
  Index numel() const;  // product of the sizes; 1 for a 0-d (scalar) shape

  const Index* begin() const { return dims_.data(); }
  const Index* end() const { return dims_.data() + ndim_; }
  std::span<const Index> dims() const { return {dims_.data(), static_cast<size_t>(ndim_)}; }

  void push_back(Index size);
  void insert(int axis, Index size);
  void erase(int axis);

  bool operator==(const Shape& other) const;

 private:
  std::array<Index, kMaxDims> dims_{};
  int ndim_ = 0;
};

// "[3,4]"; the scalar shape prints as "[]".
std::string to_string(const Shape& shape);

// Row-major strides in elements: for [2,3,4] they are [12,4,1].
std::array<Index, Shape::kMaxDims> contiguous_strides(const Shape& shape);

// NumPy broadcasting: align trailing dimensions; sizes must match or one of them be 1.
// op names the operation for the error message ("add: shapes [2,3] and [4] ...").
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

// Turns a possibly negative axis (-1 = last) into 0..ndim-1, or throws naming op.
int normalize_axis(int axis, int ndim, std::string_view op);

}  // namespace attend

template <>
struct fmt::formatter<attend::Shape> : fmt::formatter<std::string_view> {
  auto format(const attend::Shape& shape, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(attend::to_string(shape), ctx);
  }
};
