// Operations that move elements without computing with them: reorder the axes, cut a
// piece out, glue pieces together. (reshape, which only reinterprets the same memory, is a
// member of NDArray.) All of them work on every dtype.
#pragma once

#include <vector>

#include "tensor/ndarray.h"

namespace attend {

// Reorders the axes: out.shape[i] = x.shape[axes[i]]. A copy, so the result is contiguous.
NDArray permute(const NDArray& x, std::span<const int> axes);
NDArray permute(const NDArray& x, std::initializer_list<int> axes);
// Swaps two axes; transpose(x) of a 2-D x is the matrix transpose.
NDArray transpose(const NDArray& x, int axis0 = -2, int axis1 = -1);

// Removes a size-1 axis / inserts one (both share memory, like reshape).
NDArray squeeze(const NDArray& x, int axis);
NDArray unsqueeze(const NDArray& x, int axis);  // axis may be ndim (append at the end)
NDArray flatten(const NDArray& x, int start_axis = 0, int end_axis = -1);

// Elements start, start+step, ... (< stop) along `axis`. Negative start/stop count from the
// end, as in Python. A copy.
NDArray slice(const NDArray& x, int axis, Index start, Index stop, Index step = 1);
// Writes `part` into dst at positions start, start+step, ... along `axis` (the inverse of
// slice). part must have dst's shape except along `axis`.
void slice_assign(NDArray& dst, const NDArray& part, int axis, Index start, Index step = 1);

// Joins arrays along an existing axis (concat) or a new one (stack).
NDArray concat(std::span<const NDArray> parts, int axis);
NDArray stack(std::span<const NDArray> parts, int axis);
// Cuts x along `axis` into pieces of the given sizes (they must add up to the axis size).
std::vector<NDArray> split(const NDArray& x, std::span<const Index> sizes, int axis);

}  // namespace attend
