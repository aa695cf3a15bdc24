// GEMM, the kernel behind every matrix product: C = op(A) * op(B), or C += op(A) * op(B).
//
// op(A) is A or its transpose, so that the backward pass (which needs A^T G and G B^T) never
// copies a transposed matrix. Matrices are row-major with a leading dimension: element
// (i, j) of a matrix with leading dimension ld sits at p[i * ld + j].
//
// The float32 kernel is cache-blocked and register-tiled (see gemm.cpp); the float64 one
// is a plain loop, because float64 only serves gradient checks on small sizes.
#pragma once

#include "tensor/shape.h"

namespace attend {

struct GemmShape {
  Index m = 0, n = 0, k = 0;  // C is m x n, op(A) is m x k, op(B) is k x n
  bool transpose_a = false, transpose_b = false;
  bool accumulate = false;  // C += ... instead of C = ...
  // B is already in the layout the float32 kernel reads (see gemm_packed_b_size): no copy is
  // made of it, and ldb is not used. Not with transpose_b. The result is the same, bit for bit.
  bool b_packed = false;
};

// The packed layout of a k x n B: slivers of gemm_sliver_width() columns, sliver s (columns
// s * w .. s * w + w) at b + s * w * k, its element (kk, j) at [kk * w + j - s * w]; the last
// sliver has zeros in its columns past n. Written straight in this
// layout (e.g. by conv2d's im2col), B needs no packing copy. gemm_packed_b_size is the
// number of elements it takes.
Index gemm_sliver_width();
// The K block: gemm sums each element of C per block of this many k, the blocks added in order.
Index gemm_k_block();
// From this many multiply-adds (m n k) on, a float32 product is shared out to the threads;
// below it, gemm runs on the calling thread.
Index gemm_threaded_work();
Index gemm_packed_b_size(Index k, Index n);

void gemm(const GemmShape& s, const float* a, Index lda, const float* b, Index ldb, float* c,
          Index ldc);
void gemm(const GemmShape& s, const double* a, Index lda, const double* b, Index ldb, double* c,
          Index ldc);

// True when gemm() computes this float32 product with its plain loops for small products
// (few rows, or little work) rather than the blocked kernel. Their sums are in another order
// when B is transposed (a dot product along k, vectorised by the compiler), so an op that
// must give gemm's bits without calling it (nn/additive_score.cpp) asks which path a shape
// takes.
bool gemm_uses_small_loops(const GemmShape& s);

}  // namespace attend
