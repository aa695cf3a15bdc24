// Shape ops move elements around without changing them, so their backward moves the
// gradient back to where each element came from.
#include <algorithm>
#include <numeric>

#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

namespace attend {

// y = x viewed as another shape.  dL/dx = dL/dy viewed as x's shape
Tensor reshape(const Tensor& x, const Shape& shape) {
  Shape s = x.shape();
  return make_op("reshape", x.data().reshape(shape), {x},
                 [s](const NDArray& g) -> Grads { return {g.reshape(s)}; });
}

Tensor reshape(const Tensor& x, std::initializer_list<Index> sizes) {
  return reshape(x, infer_shape(sizes, x.numel(), "reshape"));
}

// y = x with axes reordered.  dL/dx = dL/dy with the inverse order
Tensor permute(const Tensor& x, std::initializer_list<int> axes) {
  std::vector<int> inverse(axes.size());
  int i = 0;
  for (int a : axes) inverse[normalize_axis(a, x.ndim(), "permute")] = i++;
  return make_op("permute", permute(x.data(), axes), {x},
                 [inverse](const NDArray& g) -> Grads { return {permute(g, inverse)}; });
}

// y = x with two axes swapped.  dL/dx = dL/dy with the same two axes swapped back
Tensor transpose(const Tensor& x, int axis0, int axis1) {
  return make_op("transpose", transpose(x.data(), axis0, axis1), {x},
                 [=](const NDArray& g) -> Grads { return {transpose(g, axis0, axis1)}; });
}

// Removing or inserting a size-1 axis is a reshape.
Tensor squeeze(const Tensor& x, int axis) {
  Shape s = x.shape();
  return make_op("squeeze", squeeze(x.data(), axis), {x},
                 [s](const NDArray& g) -> Grads { return {g.reshape(s)}; });
}

Tensor unsqueeze(const Tensor& x, int axis) {
  Shape s = x.shape();
  return make_op("unsqueeze", unsqueeze(x.data(), axis), {x},
                 [s](const NDArray& g) -> Grads { return {g.reshape(s)}; });
}

Tensor flatten(const Tensor& x, int start_axis, int end_axis) {
  return reshape(x, flatten(x.data(), start_axis, end_axis).shape());
}

// y = x[start:stop:step] along axis.  dL/dx = dL/dy at the positions taken, 0 elsewhere
Tensor slice(const Tensor& x, int axis, Index start, Index stop, Index step) {
  Shape s = x.shape();
  NDArray y = slice(x.data(), axis, start, stop, step);
  // slice() clamps start as Python does; the backward needs the position it really used.
  Index n = x.shape()[normalize_axis(axis, x.ndim(), "slice")];
  Index first = std::clamp<Index>(start < 0 ? start + n : start, 0, n);
  return make_op("slice", y, {x}, [=](const NDArray& g) -> Grads {
    NDArray dx = NDArray::zeros(s, g.dtype());
    slice_assign(dx, g, axis, first, step);
    return {dx};
  });
}

// y = [x_1, x_2, ...] joined along axis.  dL/dx_i = the piece of dL/dy where x_i went
Tensor concat(std::span<const Tensor> parts, int axis) {
  std::vector<NDArray> values;
  std::vector<Index> sizes;
  values.reserve(parts.size());
  for (const Tensor& p : parts) {
    values.push_back(p.data());
    sizes.push_back(p.data().ndim() > 0 ? p.shape()[normalize_axis(axis, p.ndim(), "concat")] : 0);
  }
  NDArray y = concat(values, axis);
  return make_op("concat", y, parts,
                 [sizes, axis](const NDArray& g) -> Grads { return split(g, sizes, axis); });
}

Tensor concat(std::initializer_list<Tensor> parts, int axis) {
  return concat(std::span<const Tensor>(parts.begin(), parts.size()), axis);
}

// stack = unsqueeze each part, then concat (composed: no backward of its own).
Tensor stack(std::span<const Tensor> parts, int axis) {
  if (parts.empty()) fail("stack: needs at least one tensor");
  int a = normalize_axis(axis, parts[0].ndim() + 1, "stack");
  std::vector<Tensor> expanded;
  expanded.reserve(parts.size());
  for (const Tensor& p : parts) {
    if (p.shape() != parts[0].shape())
      fail("stack: shapes {} and {} differ", parts[0].shape(), p.shape());
    expanded.push_back(unsqueeze(p, a));
  }
  return concat(expanded, a);
}

Tensor stack(std::initializer_list<Tensor> parts, int axis) {
  return stack(std::span<const Tensor>(parts.begin(), parts.size()), axis);
}

// split and chunk are slices (composed).
std::vector<Tensor> split(const Tensor& x, std::span<const Index> sizes, int axis) {
  Index total = std::accumulate(sizes.begin(), sizes.end(), Index{0});
  const Index n = x.shape()[normalize_axis(axis, x.ndim(), "split")];
  if (total != n)
    fail("split: sizes add up to {} but axis {} of shape {} has size {}", total, axis, x.shape(),
         n);
  std::vector<Tensor> pieces;
  Index offset = 0;
  for (Index s : sizes) {
    pieces.push_back(slice(x, axis, offset, offset + s));
    offset += s;
  }
  return pieces;
}

std::vector<Tensor> chunk(const Tensor& x, Index chunks, int axis) {
  Index n = x.shape()[normalize_axis(axis, x.ndim(), "chunk")];
  if (chunks <= 0 || n % chunks != 0)
    fail("chunk: axis {} of shape {} (size {}) does not split into {} equal pieces", axis,
         x.shape(), n, chunks);
  std::vector<Index> sizes(static_cast<std::size_t>(chunks), n / chunks);
  return split(x, sizes, axis);
}

// y_k = x[.., k, ..] for every k along axis.  dL/dx[.., k, ..] = dL/dy_k
//
// Taking T slices one by one would cost O(T) per slice in the backward (each slice's
// gradient is a zero array of x's full shape with one slice filled in, and those T arrays
// are then added up), so O(T^2) for a sequence. Instead all parts share one gradient buffer:
// a hidden node "unbind" between x and the parts, whose backward returns the buffer, and
// parts whose backward writes their gradient into their own slice of it. The first part to
// run hands the buffer to the hidden node (as that node's gradient, without a copy); the
// others only write into it, which they can because the hidden node's backward runs after
// all of theirs (it comes before them in topological order).
std::vector<Tensor> unbind(const Tensor& x, int axis) {
  const int a = normalize_axis(axis, x.ndim(), "unbind");
  const Shape whole = x.shape();
  struct SharedGradient {
    NDArray buffer;  // dL/dx, filled slice by slice; handed over once per backward pass
  };
  auto shared = std::make_shared<SharedGradient>();
  Tensor joint = make_op("unbind", x.data(), {x}, [shared](const NDArray& g) -> Grads {
    shared->buffer = NDArray();  // the next backward pass starts a new buffer
    return {g};
  });
  std::vector<Tensor> parts;
  const Index n = whole[a];
  parts.reserve(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k) {
    NDArray part = squeeze(slice(x.data(), a, k, k + 1), a);
    parts.push_back(make_op("unbind_part", part, {joint}, [=](const NDArray& g) -> Grads {
      const bool first = !shared->buffer.defined();
      if (first) shared->buffer = NDArray::zeros(whole, g.dtype());
      slice_assign(shared->buffer, unsqueeze(g, a), a, k);
      return {first ? shared->buffer : NDArray()};
    }));
  }
  return parts;
}

// y = x repeated along broadcast axes.  dL/dx = dL/dy summed over the repeats
Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  Shape s = x.shape();
  return make_op("broadcast_to", broadcast_to(x.data(), shape), {x},
                 [s](const NDArray& g) -> Grads { return {sum_to(g, s)}; });
}

}  // namespace attend
