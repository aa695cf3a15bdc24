#include "tensor/index_ops.h"

#include <cstring>

namespace attend {
namespace {

struct AxisView {
  Index outer = 1, n = 1, inner = 1;
};

AxisView axis_view(const Shape& shape, int axis) {
  AxisView v;
  for (int d = 0; d < shape.ndim(); ++d) {
    if (d < axis) v.outer *= shape[d];
    if (d > axis) v.inner *= shape[d];
  }
  v.n = shape[axis];
  return v;
}

const std::int64_t* index_data(const NDArray& index, std::string_view op) {
  check_defined(index, op, "index");
  if (index.dtype() != kInt64)
    fail("{}: indices must be int64, got {}", op, dtype_name(index.dtype()));
  return index.data<std::int64_t>();
}

Index checked(std::int64_t i, Index n, std::string_view op, int axis) {
  if (i < 0 || i >= n) fail("{}: index {} is out of range for axis {} of size {}", op, i, axis, n);
  return i;
}

// gather and scatter_add need index to match x outside `axis`.
void check_gather_shapes(const Shape& x, const Shape& index, int axis, std::string_view op) {
  bool ok = x.ndim() == index.ndim();
  for (int d = 0; ok && d < x.ndim(); ++d) ok = d == axis || x[d] == index[d];
  if (!ok)
    fail("{}: index shape {} must match input shape {} except along axis {}", op, index, x, axis);
}

}  // namespace

NDArray index_select(const NDArray& x, int axis, const NDArray& index) {
  check_defined(x, "index_select");
  int a = normalize_axis(axis, x.ndim(), "index_select");
  const std::int64_t* idx = index_data(index, "index_select");
  AxisView v = axis_view(x.shape(), a);
  Shape out_shape;
  for (int d = 0; d < a; ++d) out_shape.push_back(x.shape()[d]);
  for (Index s : index.shape()) out_shape.push_back(s);
  for (int d = a + 1; d < x.ndim(); ++d) out_shape.push_back(x.shape()[d]);
  NDArray out = NDArray::empty(out_shape, x.dtype());
  const Index m = index.numel();
  const std::size_t row = static_cast<std::size_t>(v.inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (Index j = 0; j < m; ++j) checked(idx[j], v.n, "index_select", a);
  for (Index o = 0; o < v.outer; ++o)
    for (Index j = 0; j < m; ++j)
      std::memcpy(dst + (o * m + j) * row, src + (o * v.n + idx[j]) * row, row);
  return out;
}

void index_add_(NDArray& dst, int axis, const NDArray& index, const NDArray& src) {
  check_defined(dst, "index_add_", "destination");
  check_defined(src, "index_add_", "source");
  check_same_dtype(dst, src, "index_add_");
  int a = normalize_axis(axis, dst.ndim(), "index_add_");
  const std::int64_t* idx = index_data(index, "index_add_");
  AxisView v = axis_view(dst.shape(), a);
  const Index m = index.numel();
  if (src.numel() != v.outer * m * v.inner)
    fail("index_add_: source shape {} does not match destination {} with index {}", src.shape(),
         dst.shape(), index.shape());
  for (Index j = 0; j < m; ++j) checked(idx[j], v.n, "index_add_", a);
  dispatch_float(dst.dtype(), "index_add_", [&]<class T>() {
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    for (Index o = 0; o < v.outer; ++o)
      for (Index j = 0; j < m; ++j) {
        T* to = d + (o * v.n + idx[j]) * v.inner;
        const T* from = s + (o * m + j) * v.inner;
        for (Index i = 0; i < v.inner; ++i) to[i] += from[i];
      }
  });
}

NDArray gather(const NDArray& x, int axis, const NDArray& index) {
  check_defined(x, "gather");
  int a = normalize_axis(axis, x.ndim(), "gather");
  const std::int64_t* idx = index_data(index, "gather");
  check_gather_shapes(x.shape(), index.shape(), a, "gather");
  AxisView v = axis_view(x.shape(), a);
  const Index m = index.shape()[a];
  NDArray out = NDArray::empty(index.shape(), x.dtype());
  dispatch_any(x.dtype(), [&]<class T>() {
    const T* s = x.data<T>();
    T* d = out.data<T>();
    for (Index o = 0; o < v.outer; ++o)
      for (Index j = 0; j < m; ++j)
        for (Index i = 0; i < v.inner; ++i) {
          Index k = checked(idx[(o * m + j) * v.inner + i], v.n, "gather", a);
          d[(o * m + j) * v.inner + i] = s[(o * v.n + k) * v.inner + i];
        }
  });
  return out;
}

void scatter_add_(NDArray& dst, int axis, const NDArray& index, const NDArray& src) {
  check_defined(dst, "scatter_add_", "destination");
  check_defined(src, "scatter_add_", "source");
  check_same_dtype(dst, src, "scatter_add_");
  int a = normalize_axis(axis, dst.ndim(), "scatter_add_");
  const std::int64_t* idx = index_data(index, "scatter_add_");
  check_gather_shapes(dst.shape(), index.shape(), a, "scatter_add_");
  if (src.shape() != index.shape())
    fail("scatter_add_: source shape {} differs from index shape {}", src.shape(), index.shape());
  AxisView v = axis_view(dst.shape(), a);
  const Index m = index.shape()[a];
  dispatch_float(dst.dtype(), "scatter_add_", [&]<class T>() {
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    for (Index o = 0; o < v.outer; ++o)
      for (Index j = 0; j < m; ++j)
        for (Index i = 0; i < v.inner; ++i) {
          Index k = checked(idx[(o * m + j) * v.inner + i], v.n, "scatter_add_", a);
          d[(o * v.n + k) * v.inner + i] += s[(o * m + j) * v.inner + i];
        }
  });
}

NDArray one_hot(const NDArray& index, Index classes, DType dtype) {
  const std::int64_t* idx = index_data(index, "one_hot");
  Shape shape = index.shape();
  shape.push_back(classes);
  NDArray out = NDArray::zeros(shape, dtype);
  dispatch_float(dtype, "one_hot", [&]<class T>() {
    T* d = out.data<T>();
    for (Index j = 0; j < index.numel(); ++j)
      d[j * classes + checked(idx[j], classes, "one_hot", -1)] = 1;
  });
  return out;
}

}  // namespace attend
