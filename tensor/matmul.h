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

#include <functional>

#include "tensor/ndarray.h"

namespace attend {

NDArray matmul(const NDArray& a, const NDArray& b, bool transpose_a = false,
               bool transpose_b = false);

// Runs two products that do not depend on each other (the two gradients of a product, G B^T
// and A^T G), each of about `work` multiply-adds: side by side on two threads (run_both) when
// there are two and the products are not tiny, else one after the other. Each product is
// computed as it would be alone, so the results do not depend on which way they ran.
void run_two_products(Index work, const std::function<void()>& first,
                      const std::function<void()>& second);

}  // namespace attend
