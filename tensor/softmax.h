// softmax and log_softmax along an axis, with the kernels of their gradients.
//
// Numerically stable: the row maximum m is subtracted first, softmax(x)_i =
// exp(x_i - m) / sum_j exp(x_j - m), which never overflows. A position holding -inf (a
// masked key) gets weight exactly 0; a row that is all -inf gets all zeros (there is
// nothing to attend to) rather than NaN.
#pragma once

#include "tensor/ndarray.h"

namespace attend {

NDArray softmax(const NDArray& x, int axis);
NDArray log_softmax(const NDArray& x, int axis);

// Given y = softmax(x) and g = dL/dy: dL/dx = y * (g - sum(g * y)) along the axis.
NDArray softmax_backward(const NDArray& grad, const NDArray& y, int axis);
// Given y = log_softmax(x) and g = dL/dy: dL/dx = g - exp(y) * sum(g) along the axis.
NDArray log_softmax_backward(const NDArray& grad, const NDArray& y, int axis);

}  // namespace attend
