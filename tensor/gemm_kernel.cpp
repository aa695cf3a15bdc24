// The float32 GEMM's micro-kernel: the innermost loop, where all the arithmetic happens (the
// loops around it are in gemm.cpp).
//
// It keeps a tile of C of up to MR x NR floats (12 x 32 with AVX-512: 24 vector registers) in
// registers for a whole K block. For each k it loads one row of op(B) (two vectors) and, for
// each row i of the tile, broadcasts A(i, k) and does two vector multiply-adds. A is only ever
// read one number at a time (a broadcast), so it can be read from any layout: a packed sliver,
// a transposed A in place (the same layout with a longer stride), or A's own rows in place.
//
// The tile's height is a template parameter: each height 1..MR gets its own fully unrolled
// loop with exactly two accumulators per row, so a tile at the bottom edge of C does only its
// own rows' work. Its width is handled when storing: with AVX-512, masked loads and stores
// touch only the columns that exist, so a tile at the right edge of C costs the same as a
// full one; without AVX-512 those columns are written one number at a time.
//
// Every element of C is one chain of fused multiply-adds over k, from 0, in increasing k: its
// value does not depend on the tile it falls in, nor on where A and B were read from
// (tests/tensor/test_gemm_order.cpp checks it bit for bit).
#include "tensor/gemm_kernel.h"

#include <array>
#include <utility>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace attend::gemm_detail {
namespace {

// GCC vector types: arithmetic on them compiles to SIMD instructions. may_alias lets them
// read float arrays; VecU is the unaligned variant, for rows of B and C read in place.
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float)), may_alias));
typedef float VecU
    __attribute__((vector_size(kLanes * sizeof(float)), may_alias, aligned(alignof(float))));

// C[0:Rows, 0:cols] (+)= the accumulators (acc0: columns 0..kLanes, acc1: the next kLanes).
template <int Rows>
inline void store_tile(const Vec* acc0, const Vec* acc1, float* c, Index ldc, int cols,
                       bool add_to_c) {
  if (cols == NR) {
#pragma GCC unroll 16
    for (int i = 0; i < Rows; ++i) {
      VecU* row = reinterpret_cast<VecU*>(c + i * ldc);
      row[0] = add_to_c ? row[0] + acc0[i] : acc0[i];
      row[1] = add_to_c ? row[1] + acc1[i] : acc1[i];
    }
    return;
  }
#if defined(__AVX512F__)
  // One bit per column that exists, for each of the two vectors.
  const __mmask16 mask0 = cols >= kLanes ? 0xFFFF : (1u << cols) - 1;
  const __mmask16 mask1 = cols > kLanes ? (1u << (cols - kLanes)) - 1 : 0;
#pragma GCC unroll 16
  for (int i = 0; i < Rows; ++i) {
    float* row = c + i * ldc;
    Vec v0 = acc0[i], v1 = acc1[i];
    if (add_to_c) {
      v0 = _mm512_maskz_loadu_ps(mask0, row) + v0;
      v1 = _mm512_maskz_loadu_ps(mask1, row + kLanes) + v1;
    }
    _mm512_mask_storeu_ps(row, mask0, v0);
    _mm512_mask_storeu_ps(row + kLanes, mask1, v1);
  }
#else
  for (int i = 0; i < Rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const float v = j < kLanes ? acc0[i][j] : acc1[i][j - kLanes];
      c[i * ldc + j] = add_to_c ? c[i * ldc + j] + v : v;
    }
#endif
}

// acc + x * b, rounded once: a fused multiply-add, written out. (Left to the compiler, with
// -ffp-contract=fast, `acc += x * b` becomes one only from -O2 on: a Debug build would round
// twice and give other bits than a Release build.)
inline Vec fused_multiply_add(float x, Vec b, Vec acc) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(_mm512_set1_ps(x), b, acc);  // x is broadcast to every lane
#elif defined(__FMA__)
  return _mm256_fmadd_ps(_mm256_set1_ps(x), b, acc);
#else
  return acc + x * b;  // no FMA instruction: a multiply, then an add
#endif
}

template <int Rows, bool RowMajorA>
void kernel(Index kc, const float* a, Index lda, const float* b, Index ldb, float* c, Index ldc,
            int cols, bool add_to_c) {
  Vec acc0[Rows] = {}, acc1[Rows] = {};
  for (Index k = 0; k < kc; ++k) {
    const Vec b0 = *reinterpret_cast<const VecU*>(b);
    const Vec b1 = *reinterpret_cast<const VecU*>(b + kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < Rows; ++i) {
      const float x = RowMajorA ? a[i * lda + k] : a[k * lda + i];  // A(i, k)
      acc0[i] = fused_multiply_add(x, b0, acc0[i]);
      acc1[i] = fused_multiply_add(x, b1, acc1[i]);
    }
    b += ldb;
  }
  store_tile<Rows>(acc0, acc1, c, ldc, cols, add_to_c);
}

using Kernel = void (*)(Index, const float*, Index, const float*, Index, float*, Index, int, bool);

// kernel<1, ...> .. kernel<MR, ...>, indexed by rows - 1.
template <bool RowMajorA, int... R>
constexpr std::array<Kernel, MR> kernels_by_height(std::integer_sequence<int, R...>) {
  return {&kernel<R + 1, RowMajorA>...};
}
constexpr auto kColumnKernels = kernels_by_height<false>(std::make_integer_sequence<int, MR>{});
constexpr auto kRowKernels = kernels_by_height<true>(std::make_integer_sequence<int, MR>{});

}  // namespace

void multiply_tile(Index kc, const TileA& a, const float* b, Index ldb, float* c, Index ldc,
                   int rows, int cols, bool add_to_c) {
  const auto& kernels = a.row_major ? kRowKernels : kColumnKernels;
  kernels[rows - 1](kc, a.p, a.ld, b, ldb, c, ldc, cols, add_to_c);
}

}  // namespace attend::gemm_detail
