#include "tensor/shape.h"

#include <algorithm>

#include "tensor/error.h"

namespace attend {

Shape::Shape(std::initializer_list<Index> dims) : Shape(std::span<const Index>(dims)) {}

Shape::Shape(std::span<const Index> dims) {
  if (dims.size() > kMaxDims) fail("shape: at most {} dimensions are supported", kMaxDims);
  for (Index size : dims) push_back(size);
}

// Sizes are checked when they are multiplied: a product that does not fit in 64 bits would
// wrap (undefined behaviour for a signed Index) to a small count, and the next element access
// would read outside the array.
Index Shape::numel() const {
  Index n = 1;
  for (Index size : *this)
    if (__builtin_mul_overflow(n, size, &n))
      fail("shape {}: the number of elements does not fit in 64 bits", to_string(*this));
  return n;
}

void Shape::push_back(Index size) {
  if (ndim_ == kMaxDims) fail("shape: at most {} dimensions are supported", kMaxDims);
  if (size < 0) fail("shape: sizes must be >= 0, got {}", size);
  dims_[ndim_++] = size;
}

void Shape::insert(int axis, Index size) {
  if (ndim_ == kMaxDims) fail("shape: at most {} dimensions are supported", kMaxDims);
  if (size < 0) fail("shape: sizes must be >= 0, got {}", size);
  for (int i = ndim_; i > axis; --i) dims_[i] = dims_[i - 1];
  dims_[axis] = size;
  ++ndim_;
}

void Shape::erase(int axis) {
  for (int i = axis; i + 1 < ndim_; ++i) dims_[i] = dims_[i + 1];
  --ndim_;
}

bool Shape::operator==(const Shape& other) const {
  if (ndim_ != other.ndim_) return false;
  for (int i = 0; i < ndim_; ++i)
    if (dims_[i] != other.dims_[i]) return false;
  return true;
}

std::string to_string(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::array<Index, Shape::kMaxDims> contiguous_strides(const Shape& shape) {
  std::array<Index, Shape::kMaxDims> strides{};
  Index stride = 1;
  for (int axis = shape.ndim() - 1; axis >= 0; --axis) {
    strides[axis] = stride;
    // [0, 2^40, 2^40] has no elements, but its first stride would still be 2^80.
    if (__builtin_mul_overflow(stride, shape[axis], &stride))
      fail("shape {}: the strides do not fit in 64 bits", to_string(shape));
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  int ndim = std::max(a.ndim(), b.ndim());
  Shape out;
  for (int i = 0; i < ndim; ++i) {
    // Walk both shapes from the left of the longer one; missing leading dims count as 1.
    int ia = i - (ndim - a.ndim()), ib = i - (ndim - b.ndim());
    Index sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(
          "{}: shapes {} and {} cannot be broadcast (size {} vs {} in dimension {} from the right)",
          op, a, b, sa, sb, ndim - i);
    out.push_back(sa == 1 ? sb : sa);
  }
  return out;
}

int normalize_axis(int axis, int ndim, std::string_view op) {
  int fixed = axis < 0 ? axis + ndim : axis;
  if (fixed < 0 || fixed >= ndim)
    fail("{}: axis {} is out of range for an array with {} dimensions", op, axis, ndim);
  return fixed;
}

}  // namespace attend
