#include "tensor/shape_ops.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace attend {
namespace {

// slice and slice_assign (and through them concat and split) see both arrays as
// [outer, n, inner] and move, for every outer block, `count` runs of `inner` elements taken
// every `step` along the middle axis. With step 1 the runs of a block are adjacent, so each
// block moves in one copy: for a cut along the last axis (inner = 1) that is one memcpy per
// row instead of one per element. `from(o, k)` and `to(o, k)` give the element offsets.
template <class From, class To>
void copy_runs(const std::byte* src, std::byte* dst, Index outer, Index count, Index inner,
               Index step, std::size_t element_bytes, From from, To to) {
  if (count == 0) return;
  if (step == 1) {
    const std::size_t block = static_cast<std::size_t>(count * inner) * element_bytes;
    for (Index o = 0; o < outer; ++o)
      std::memcpy(dst + to(o, 0) * element_bytes, src + from(o, 0) * element_bytes, block);
    return;
  }
  const std::size_t run = static_cast<std::size_t>(inner) * element_bytes;
  for (Index o = 0; o < outer; ++o)
    for (Index k = 0; k < count; ++k)
      std::memcpy(dst + to(o, k) * element_bytes, src + from(o, k) * element_bytes, run);
}

Index fix_bound(Index i, Index n) {
  if (i < 0) i += n;
  return std::clamp<Index>(i, 0, n);
}

}  // namespace

NDArray permute(const NDArray& x, std::span<const int> axes) {
  check_defined(x, "permute");
  const int n = x.ndim();
  if (static_cast<int>(axes.size()) != n)
    fail("permute: {} axes given for an array of shape {}", axes.size(), x.shape());
  std::array<int, Shape::kMaxDims> order{};
  std::array<bool, Shape::kMaxDims> seen{};
  for (int i = 0; i < n; ++i) {
    int a = normalize_axis(axes[i], n, "permute");
    if (seen[a]) fail("permute: axis {} appears twice", a);
    seen[a] = true;
    order[i] = a;
  }
  Shape out_shape;
  for (int i = 0; i < n; ++i) out_shape.push_back(x.shape()[order[i]]);
  NDArray out = NDArray::empty(out_shape, x.dtype());
  if (x.numel() == 0) return out;

  // Walk the output in order; in_stride[i] is how far the input moves when output index i
  // grows by one.
  auto src_strides = contiguous_strides(x.shape());
  std::array<Index, Shape::kMaxDims> in_stride{};
  for (int i = 0; i < n; ++i) in_stride[i] = src_strides[order[i]];
  dispatch_any(x.dtype(), [&]<class T>() {
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    if (n == 0) {
      dst[0] = src[0];
      return;
    }
    const Index inner = out_shape[n - 1], inner_stride = in_stride[n - 1];
    const Index rows = out.numel() / inner;
    std::array<Index, Shape::kMaxDims> counter{};
    Index offset = 0;
    for (Index r = 0; r < rows; ++r) {
      T* row = dst + r * inner;
      for (Index i = 0; i < inner; ++i) row[i] = src[offset + i * inner_stride];
      for (int d = n - 2; d >= 0; --d) {
        offset += in_stride[d];
        if (++counter[d] < out_shape[d]) break;
        offset -= in_stride[d] * out_shape[d];
        counter[d] = 0;
      }
    }
  });
  return out;
}

NDArray permute(const NDArray& x, std::initializer_list<int> axes) {
  return permute(x, std::span<const int>(axes.begin(), axes.size()));
}

NDArray transpose(const NDArray& x, int axis0, int axis1) {
  check_defined(x, "transpose");
  if (x.ndim() < 2) fail("transpose: needs at least 2 dimensions, got shape {}", x.shape());
  int a = normalize_axis(axis0, x.ndim(), "transpose");
  int b = normalize_axis(axis1, x.ndim(), "transpose");
  std::array<int, Shape::kMaxDims> axes{};
  std::iota(axes.begin(), axes.begin() + x.ndim(), 0);
  std::swap(axes[a], axes[b]);
  return permute(x, std::span<const int>(axes.data(), x.ndim()));
}

NDArray squeeze(const NDArray& x, int axis) {
  check_defined(x, "squeeze");
  int a = normalize_axis(axis, x.ndim(), "squeeze");
  if (x.shape()[a] != 1)
    fail("squeeze: axis {} of shape {} has size {}, not 1", axis, x.shape(), x.shape()[a]);
  Shape s = x.shape();
  s.erase(a);
  return x.reshape(s);
}

NDArray unsqueeze(const NDArray& x, int axis) {
  check_defined(x, "unsqueeze");
  int a = normalize_axis(axis, x.ndim() + 1, "unsqueeze");
  Shape s = x.shape();
  s.insert(a, 1);
  return x.reshape(s);
}

NDArray flatten(const NDArray& x, int start_axis, int end_axis) {
  check_defined(x, "flatten");
  if (x.ndim() == 0) return x.reshape(Shape{1});
  int a = normalize_axis(start_axis, x.ndim(), "flatten");
  int b = normalize_axis(end_axis, x.ndim(), "flatten");
  if (a > b) fail("flatten: start axis {} comes after end axis {}", start_axis, end_axis);
  Shape s;
  Index merged = 1;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d < a || d > b) s.push_back(x.shape()[d]);
    if (d >= a && d <= b) merged *= x.shape()[d];
    if (d == b) s.push_back(merged);
  }
  return x.reshape(s);
}

NDArray slice(const NDArray& x, int axis, Index start, Index stop, Index step) {
  check_defined(x, "slice");
  int a = normalize_axis(axis, x.ndim(), "slice");
  if (step <= 0) fail("slice: step must be positive, got {}", step);
  const Index n = x.shape()[a];
  Index first = fix_bound(start, n), last = fix_bound(stop, n);
  Index count = last > first ? (last - first + step - 1) / step : 0;
  Shape out_shape = x.shape();
  out_shape[a] = count;
  NDArray out = NDArray::empty(out_shape, x.dtype());
  // View both as [outer, n, inner]; each kept (outer, k) is one contiguous row of inner.
  Index outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= x.shape()[d];
  for (int d = a + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  copy_runs(
      static_cast<const std::byte*>(x.raw_data()), static_cast<std::byte*>(out.raw_data()), outer,
      count, inner, step, dtype_size(x.dtype()),
      [&](Index o, Index k) { return (o * n + first + k * step) * inner; },
      [&](Index o, Index k) { return (o * count + k) * inner; });
  return out;
}

void slice_assign(NDArray& dst, const NDArray& part, int axis, Index start, Index step) {
  check_defined(dst, "slice_assign", "destination");
  check_defined(part, "slice_assign", "part");
  check_same_dtype(dst, part, "slice_assign");
  int a = normalize_axis(axis, dst.ndim(), "slice_assign");
  if (part.ndim() != dst.ndim())
    fail("slice_assign: part {} and destination {} differ in rank", part.shape(), dst.shape());
  for (int d = 0; d < dst.ndim(); ++d)
    if (d != a && part.shape()[d] != dst.shape()[d])
      fail("slice_assign: part {} does not fit destination {} outside axis {}", part.shape(),
           dst.shape(), a);
  const Index n = dst.shape()[a], count = part.shape()[a];
  if (step <= 0) fail("slice_assign: step must be positive, got {}", step);
  if (count > 0 && (start < 0 || start + (count - 1) * step >= n))
    fail("slice_assign: {} elements from {} with step {} overrun axis {} of size {}", count, start,
         step, a, n);
  Index outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= dst.shape()[d];
  for (int d = a + 1; d < dst.ndim(); ++d) inner *= dst.shape()[d];
  copy_runs(
      static_cast<const std::byte*>(part.raw_data()), static_cast<std::byte*>(dst.raw_data()),
      outer, count, inner, step, dtype_size(dst.dtype()),
      [&](Index o, Index k) { return (o * count + k) * inner; },
      [&](Index o, Index k) { return (o * n + start + k * step) * inner; });
}

NDArray concat(std::span<const NDArray> parts, int axis) {
  if (parts.empty()) fail("concat: needs at least one array");
  const NDArray& first = parts[0];
  check_defined(first, "concat");
  int a = normalize_axis(axis, first.ndim(), "concat");
  Shape out_shape = first.shape();
  Index total = 0;
  for (const NDArray& p : parts) {
    check_defined(p, "concat");
    check_same_dtype(first, p, "concat");
    bool fits = p.ndim() == first.ndim();
    for (int d = 0; fits && d < p.ndim(); ++d) fits = d == a || p.shape()[d] == first.shape()[d];
    if (!fits) fail("concat: shapes {} and {} differ outside axis {}", first.shape(), p.shape(), a);
    total += p.shape()[a];
  }
  out_shape[a] = total;
  NDArray out = NDArray::empty(out_shape, first.dtype());
  Index offset = 0;
  for (const NDArray& p : parts) {
    slice_assign(out, p, a, offset, 1);
    offset += p.shape()[a];
  }
  return out;
}

NDArray stack(std::span<const NDArray> parts, int axis) {
  if (parts.empty()) fail("stack: needs at least one array");
  check_defined(parts[0], "stack");
  int a = normalize_axis(axis, parts[0].ndim() + 1, "stack");
  std::vector<NDArray> expanded;
  expanded.reserve(parts.size());
  for (const NDArray& p : parts) {
    check_defined(p, "stack");
    if (p.shape() != parts[0].shape())
      fail("stack: shapes {} and {} differ", parts[0].shape(), p.shape());
    expanded.push_back(unsqueeze(p, a));
  }
  return concat(expanded, a);
}

std::vector<NDArray> split(const NDArray& x, std::span<const Index> sizes, int axis) {
  check_defined(x, "split");
  int a = normalize_axis(axis, x.ndim(), "split");
  Index total = 0;
  for (Index s : sizes) {
    if (s < 0) fail("split: sizes must be >= 0, got {}", s);
    total += s;
  }
  if (total != x.shape()[a])
    fail("split: sizes add up to {} but axis {} of shape {} has size {}", total, a, x.shape(),
         x.shape()[a]);
  std::vector<NDArray> pieces;
  Index offset = 0;
  for (Index s : sizes) {
    pieces.push_back(slice(x, a, offset, offset + s));
    offset += s;
  }
  return pieces;
}

}  // namespace attend
