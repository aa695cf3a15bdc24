// Reductions: combine the elements along one axis into one.
//
// sum(x, axis) of a [2,3,4] array over axis 1 has shape [2,4], or [2,1,4] with keepdim,
// which still broadcasts against x (handy for x - max(x, axis, true)). The axis may be
// negative: -1 is the last one. Without an axis, the whole array reduces to a 0-d scalar.
#pragma once

#include "tensor/ndarray.h"

namespace attend {

NDArray sum(const NDArray& x, int axis, bool keepdim = false);
NDArray mean(const NDArray& x, int axis, bool keepdim = false);
NDArray max(const NDArray& x, int axis, bool keepdim = false);
NDArray min(const NDArray& x, int axis, bool keepdim = false);
// log(sum(exp(x))) computed as m + log(sum(exp(x - m))), m = max(x): no overflow.
NDArray logsumexp(const NDArray& x, int axis, bool keepdim = false);
// The position of the largest element along the axis (the first one on ties), as int64.
NDArray argmax(const NDArray& x, int axis, bool keepdim = false);

// Whole-array reductions to a 0-d array.
NDArray sum(const NDArray& x);
NDArray mean(const NDArray& x);
NDArray max(const NDArray& x);

// Sums x down to `shape`, undoing a broadcast: sum_to([4,3] array, [3]) adds the 4 rows.
// This is how the gradient of a broadcast input is formed.
NDArray sum_to(const NDArray& x, const Shape& shape);

// Squared L2 norm of all elements, accumulated in double.
double squared_norm(const NDArray& x);

}  // namespace attend
