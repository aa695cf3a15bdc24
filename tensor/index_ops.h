// Indexing with arrays of positions (int64): look rows up (embeddings), pick one element
// per row (the target class in cross-entropy), and the scatter-adds that are their
// gradients. Every index is range-checked.
#pragma once

#include "tensor/ndarray.h"

namespace attend {

// Takes whole slices of x along `axis` at the given positions (NumPy's take):
// out.shape = x.shape[:axis] + index.shape + x.shape[axis+1:]. An embedding lookup is
// index_select(table [V,D], 0, ids [B,T]) -> [B,T,D].
NDArray index_select(const NDArray& x, int axis, const NDArray& index);
// dst[.., index[j], ..] += src[.., j, ..]: the gradient of index_select (repeated
// positions add up).
void index_add_(NDArray& dst, int axis, const NDArray& index, const NDArray& src);

// One element per position (torch.gather): index has x's rank and sizes except along
// `axis`; out[o, j, i] = x[o, index[o, j, i], i], viewing the arrays as [outer, n, inner].
NDArray gather(const NDArray& x, int axis, const NDArray& index);
// dst[o, index[o, j, i], i] += src[o, j, i]: the gradient of gather.
void scatter_add_(NDArray& dst, int axis, const NDArray& index, const NDArray& src);

// [.., classes] array with 1 at each index and 0 elsewhere.
NDArray one_hot(const NDArray& index, Index classes, DType dtype = kFloat32);

}  // namespace attend
