// Reductions and softmax. A reduction's backward spreads each output gradient back over
// the elements it combined: all of them for a sum, 1/n each for a mean, the winner only for
// a max.
#include "autograd/ops.h"
#include "autograd/saved_array.h"
#include "tensor/elementwise.h"
#include "tensor/index_ops.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace attend {
namespace {
// The gradient of a reduction over `axis` has the reduced shape; put the axis back (if
// it was dropped) so that it broadcasts against the input.
NDArray with_axis(const NDArray& g, int axis, int ndim, bool keepdim) {
  return keepdim ? g : unsqueeze(g, normalize_axis(axis, ndim, "reduce"));
}
}  // namespace

// y = sum_i x_i.  dy/dx_i = 1
Tensor sum(const Tensor& x) {
  Shape s = x.shape();
  return make_op("sum", sum(x.data()), {x},
                 [s](const NDArray& g) -> Grads { return {broadcast_to(g, s)}; });
}

// y = (1/n) sum_i x_i.  dy/dx_i = 1/n
Tensor mean(const Tensor& x) {
  Shape s = x.shape();
  return make_op("mean", mean(x.data()), {x}, [s](const NDArray& g) -> Grads {
    return {broadcast_to(g * (1.0 / static_cast<double>(s.numel())), s)};
  });
}

// y_j = sum_k x_jk (k along axis).  dy_j/dx_jk = 1
Tensor sum(const Tensor& x, int axis, bool keepdim) {
  Shape s = x.shape();
  return make_op("sum_axis", sum(x.data(), axis, keepdim), {x}, [=](const NDArray& g) -> Grads {
    return {broadcast_to(with_axis(g, axis, s.ndim(), keepdim), s)};
  });
}

// y_j = (1/n) sum_k x_jk.  dy_j/dx_jk = 1/n
Tensor mean(const Tensor& x, int axis, bool keepdim) {
  Shape s = x.shape();
  double n = static_cast<double>(x.shape()[normalize_axis(axis, x.ndim(), "mean")]);
  return make_op("mean_axis", mean(x.data(), axis, keepdim), {x}, [=](const NDArray& g) -> Grads {
    return {broadcast_to(with_axis(g, axis, s.ndim(), keepdim) * (1.0 / n), s)};
  });
}

// y_j = max_k x_jk.  dy_j/dx_jk = 1 for the first k that attains the max, else 0
Tensor max(const Tensor& x, int axis, bool keepdim) {
  normalize_axis(axis, x.ndim(), "max");  // before argmax, which would name itself
  Shape s = x.shape();
  NDArray winner = argmax(x.data(), axis, true);  // [.., 1, ..] positions of the maxima
  return make_op("max", max(x.data(), axis, keepdim), {x}, [=](const NDArray& g) -> Grads {
    NDArray dx = NDArray::zeros(s, g.dtype());
    scatter_add_(dx, axis, winner, with_axis(g, axis, s.ndim(), keepdim));
    return {dx};
  });
}

// y_j = log sum_k e^x_jk.  dy_j/dx_jk = e^(x_jk - y_j) = softmax(x)_jk
Tensor logsumexp(const Tensor& x, int axis, bool keepdim) {
  SavedArray xv(x.data(), "input #0");
  NDArray yv = logsumexp(x.data(), axis, keepdim);
  SavedArray y(yv, "output");
  return make_op("logsumexp", yv, {x}, [=](const NDArray& g) -> Grads {
    const int nd = xv.ndim();
    return {with_axis(g, axis, nd, keepdim) * exp(xv - with_axis(y, axis, nd, keepdim))};
  });
}

Tensor argmax(const Tensor& x, int axis, bool keepdim) {
  return Tensor(argmax(x.data(), axis, keepdim));
}

// y = softmax(x) along axis.  dy_i/dx_j = y_i (delta_ij - y_j), so
// dL/dx = y * (g - sum_i g_i y_i)
Tensor softmax(const Tensor& x, int axis) {
  NDArray y = softmax(x.data(), axis);
  return make_op("softmax", y, {x}, [y = SavedArray(y, "output"), axis](const NDArray& g) -> Grads {
    return {softmax_backward(g, y, axis)};
  });
}

// y = log_softmax(x) = x - logsumexp(x).  dy_i/dx_j = delta_ij - softmax(x)_j, so
// dL/dx = g - softmax(x) * sum_i g_i
Tensor log_softmax(const Tensor& x, int axis) {
  NDArray y = log_softmax(x.data(), axis);
  return make_op("log_softmax", y, {x},
                 [y = SavedArray(y, "output"), axis](const NDArray& g) -> Grads {
                   return {log_softmax_backward(g, y, axis)};
                 });
}

}  // namespace attend
