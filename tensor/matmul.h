// Matrix products of arrays with two or more dimensions.
//
// The last two axes are the matrices: a [.., M, K] times b [.., K, N] gives [.., M, N].
// The axes before them are batch axes and broadcast like elementwise operations, so
// [B, M, K] @ [K, N] multiplies every batch entry by the same matrix, and
// [B, H, T, D] @ [B, H, D, T] does B*H products at once (multi-head attention).
//
// transpose_a / transpose_b use the transpose of the last two axes of a / b without
// copying them: matmul(g, w, false, true) is g @ w^T.
#pragma once

#include "tensor/ndarray.h"

namespace attend {

NDArray matmul(const NDArray& a, const NDArray& b, bool transpose_a = false,
               bool transpose_b = false);

}  // namespace attend
