// The float32 GEMM's micro-kernel (gemm_kernel.cpp), shared by the driver (gemm.cpp) and
// nothing else: the tile sizes, and one call that adds an op(A) rows x op(B) columns product
// into a tile of C. Not part of attend's public API.
#pragma once

#include "tensor/shape.h"

namespace attend::gemm_detail {

#if defined(__AVX512F__)
constexpr int kLanes = 16;  // floats per vector register
constexpr int MR = 12;
#elif defined(__AVX__)
constexpr int kLanes = 8;
constexpr int MR = 6;
#else
constexpr int kLanes = 4;
constexpr int MR = 4;
#endif
constexpr int NR = 2 * kLanes;  // a tile of C is (up to) MR x NR: MR rows of two vectors

// Where the kernel reads its rows of op(A). Element (i, k) of the tile's rows is at
//   p[i * ld + k]  when row_major (A itself, not transposed, read in place), or
//   p[k * ld + i]  otherwise (a packed sliver, ld = MR; or a transposed A read in place).
struct TileA {
  const float* p = nullptr;
  Index ld = 0;
  bool row_major = false;
};

// C[0:rows, 0:cols] = (add_to_c ? C : nothing) + sum over k < kc of op(A)(i, k) * op(B)(k, j),
// the sum taken in one fused multiply-add per k, k increasing, from 0. Row k of op(B) is
// b[k * ldb .. k * ldb + NR): all NR columns must be readable (zeros past `cols`).
// rows <= MR, cols <= NR.
void multiply_tile(Index kc, const TileA& a, const float* b, Index ldb, float* c, Index ldc,
                   int rows, int cols, bool add_to_c);

}  // namespace attend::gemm_detail
