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
};

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
