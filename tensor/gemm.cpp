// The float32 GEMM, in the style of BLIS (Van Zee and van de Geijn, 2015) and Goto's
// "Anatomy of high-performance matrix multiplication" (2008):
//
//   for each panel of NC columns of B                      (B panel lives in L3)
//     for each block of KC rows of B / columns of A        (one rank-KC update of C)
//       pack the KC x NC panel of op(B) into slivers NR wide
//       for each block of MC rows of op(A)                 (A block lives in L2)
//         pack the MC x KC block of op(A) into slivers MR tall
//         for each B sliver (KC x NR, stays in L1)
//           for each A sliver: the micro-kernel adds the MR x NR product into C
//
// The micro-kernel keeps a whole MR x NR tile of C in vector registers (12 x 32 floats =
// 24 AVX-512 registers) and, for each k, does MR broadcast-multiply-adds with two vectors of
// B. Packing puts the numbers it reads in exactly the order it reads them, so every load is
// contiguous, and zero-pads the edges so the kernel never needs a bounds check.
//
// This file is compiled with -ffp-contract=fast, so that `acc += a * b` becomes one fused
// multiply-add instruction.
#include "tensor/gemm.h"

#include <algorithm>

#include "tensor/allocator.h"
#include "tensor/parallel.h"

namespace attend {
namespace {

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
constexpr int NR = 2 * kLanes;
constexpr Index KC = 256;
constexpr Index MC = MR * 12;
constexpr Index NC = NR * 32;
// Products with at most this many rows, or this many multiply-adds, are not packed.
constexpr Index kSmallRows = 2;
constexpr Index kSmallWork = Index{1} << 14;

// GCC vector types: arithmetic on them compiles to SIMD instructions. may_alias lets them
// read float arrays; the unaligned variant is for rows of C, which have no alignment.
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float)), may_alias));
typedef float VecU
    __attribute__((vector_size(kLanes * sizeof(float)), may_alias, aligned(alignof(float))));

// Packing buffers, one pair per thread, grown on demand and kept: no allocation per call.
struct PackBuffers {
  float* a = nullptr;
  float* b = nullptr;
  PackBuffers() {
    a = static_cast<float*>(memory::allocate(sizeof(float) * MC * KC));
    b = static_cast<float*>(memory::allocate(sizeof(float) * KC * NC));
  }
  ~PackBuffers() {
    memory::release(a, sizeof(float) * MC * KC);
    memory::release(b, sizeof(float) * KC * NC);
  }
  PackBuffers(const PackBuffers&) = delete;
  PackBuffers& operator=(const PackBuffers&) = delete;
};

PackBuffers& pack_buffers() {
  thread_local PackBuffers buffers;
  return buffers;
}

// Rows i0..i0+mc of op(A), columns k0..k0+kc, into slivers of MR rows: sliver s holds
// element (i, k) at [k * MR + i], zero rows past the edge.
void pack_a(const float* a, Index lda, bool transposed, Index i0, Index mc, Index k0, Index kc,
            float* packed) {
  for (Index s = 0; s < mc; s += MR) {
    const Index rows = std::min<Index>(MR, mc - s);
    float* dst = packed + s * kc;
    if (!transposed) {
      for (Index i = 0; i < rows; ++i) {
        const float* src = a + (i0 + s + i) * lda + k0;
        for (Index k = 0; k < kc; ++k) dst[k * MR + i] = src[k];
      }
    } else {
      for (Index k = 0; k < kc; ++k) {
        const float* src = a + (k0 + k) * lda + i0 + s;
        for (Index i = 0; i < rows; ++i) dst[k * MR + i] = src[i];
      }
    }
    for (Index k = 0; k < kc; ++k)
      for (Index i = rows; i < MR; ++i) dst[k * MR + i] = 0;
  }
}

// Rows k0..k0+kc of op(B), columns j0..j0+nc, into slivers of NR columns: sliver s holds
// element (k, j) at [k * NR + j], zero columns past the edge.
void pack_b(const float* b, Index ldb, bool transposed, Index k0, Index kc, Index j0, Index nc,
            float* packed) {
  for (Index s = 0; s < nc; s += NR) {
    const Index cols = std::min<Index>(NR, nc - s);
    float* dst = packed + s * kc;
    if (!transposed) {
      for (Index k = 0; k < kc; ++k) {
        const float* src = b + (k0 + k) * ldb + j0 + s;
        if (cols == NR) {  // a whole row of the sliver: a fixed-length copy, vectorised
          std::copy_n(src, NR, dst + k * NR);
          continue;
        }
        for (Index j = 0; j < cols; ++j) dst[k * NR + j] = src[j];
        for (Index j = cols; j < NR; ++j) dst[k * NR + j] = 0;
      }
    } else {
      // A transpose: column j of the sliver is a row of B. Done kBlock rows of the sliver at a
      // time, so that the rows being written (kBlock x NR floats) stay in the L1 cache.
      constexpr Index kBlock = 16;
      for (Index kb = 0; kb < kc; kb += kBlock) {
        const Index k_end = std::min(kc, kb + kBlock);
        for (Index j = 0; j < cols; ++j) {
          const float* src = b + (j0 + s + j) * ldb + k0;
          for (Index k = kb; k < k_end; ++k) dst[k * NR + j] = src[k];
        }
      }
      for (Index k = 0; k < kc; ++k)
        for (Index j = cols; j < NR; ++j) dst[k * NR + j] = 0;
    }
  }
}

// C[0:MR, 0:NR] (+)= sum over k of packed A column k (MR values) times packed B row k (NR).
void micro_kernel(Index kc, const float* ap, const float* bp, float* c, Index ldc, bool add_to_c) {
  Vec acc0[MR] = {}, acc1[MR] = {};
  for (Index k = 0; k < kc; ++k) {
    const Vec b0 = *reinterpret_cast<const Vec*>(bp);
    const Vec b1 = *reinterpret_cast<const Vec*>(bp + kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      // scalar * vector broadcasts A(i, k) to every lane (an embedded-broadcast operand)
      acc0[i] += ap[i] * b0;
      acc1[i] += ap[i] * b1;
    }
    ap += MR;
    bp += NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    VecU* row = reinterpret_cast<VecU*>(c + i * ldc);
    if (add_to_c) {
      row[0] += acc0[i];
      row[1] += acc1[i];
    } else {
      row[0] = acc0[i];
      row[1] = acc1[i];
    }
  }
}

// A partial tile at the bottom or right edge: compute the full tile aside, keep mr x nr.
void edge_tile(Index kc, const float* ap, const float* bp, float* c, Index ldc, Index mr, Index nr,
               bool add_to_c) {
  alignas(64) float tile[MR * NR];
  micro_kernel(kc, ap, bp, tile, NR, false);
  for (Index i = 0; i < mr; ++i)
    for (Index j = 0; j < nr; ++j)
      c[i * ldc + j] = (add_to_c ? c[i * ldc + j] : 0.0f) + tile[i * NR + j];
}

// One thread's GEMM over the whole of the given C.
void gemm_serial(const GemmShape& s, const float* a, Index lda, const float* b, Index ldb, float* c,
                 Index ldc) {
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {
    if (!s.accumulate)
      for (Index i = 0; i < s.m; ++i) std::fill(c + i * ldc, c + i * ldc + s.n, 0.0f);
    return;
  }
  PackBuffers& buffers = pack_buffers();
  for (Index jc = 0; jc < s.n; jc += NC) {
    const Index nc = std::min(NC, s.n - jc);
    for (Index pc = 0; pc < s.k; pc += KC) {
      const Index kc = std::min(KC, s.k - pc);
      pack_b(b, ldb, s.transpose_b, pc, kc, jc, nc, buffers.b);
      const bool add_to_c = s.accumulate || pc > 0;  // later K blocks add to the first
      for (Index ic = 0; ic < s.m; ic += MC) {
        const Index mc = std::min(MC, s.m - ic);
        pack_a(a, lda, s.transpose_a, ic, mc, pc, kc, buffers.a);
        for (Index jr = 0; jr < nc; jr += NR) {
          const Index nr = std::min<Index>(NR, nc - jr);
          for (Index ir = 0; ir < mc; ir += MR) {
            const Index mr = std::min<Index>(MR, mc - ir);
            float* tile = c + (ic + ir) * ldc + jc + jr;
            const float* ap = buffers.a + ir * kc;
            const float* bp = buffers.b + jr * kc;
            if (mr == MR && nr == NR)
              micro_kernel(kc, ap, bp, tile, ldc, add_to_c);
            else
              edge_tile(kc, ap, bp, tile, ldc, mr, nr, add_to_c);
          }
        }
      }
    }
  }
}

// Products this small skip packing (see gemm_small).
bool is_small(const GemmShape& s) {
  return s.m <= kSmallRows || s.m * s.n * s.k <= kSmallWork;
}

// Small products: a matrix-vector product in an attention step, or [1,25] @ [25,128], costs
// less than packing its operands would. Plain loops, vectorised along a row of C (or along
// k for a transposed B, as dot products).
void gemm_small(const GemmShape& s, const float* a, Index lda, const float* b, Index ldb, float* c,
                Index ldc) {
  for (Index i = 0; i < s.m; ++i) {
    float* crow = c + i * ldc;
    if (!s.accumulate) std::fill(crow, crow + s.n, 0.0f);
    if (!s.transpose_b) {
      for (Index p = 0; p < s.k; ++p) {
        const float aip = s.transpose_a ? a[p * lda + i] : a[i * lda + p];
        const float* brow = b + p * ldb;
#pragma omp simd
        for (Index j = 0; j < s.n; ++j) crow[j] += aip * brow[j];
      }
    } else {
      for (Index j = 0; j < s.n; ++j) {
        const float* brow = b + j * ldb;
        float dot = 0;
        if (!s.transpose_a) {
          const float* arow = a + i * lda;
#pragma omp simd reduction(+ : dot)
          for (Index p = 0; p < s.k; ++p) dot += arow[p] * brow[p];
        } else {
          for (Index p = 0; p < s.k; ++p) dot += a[p * lda + i] * brow[p];
        }
        crow[j] += dot;
      }
    }
  }
}

// Below this many multiply-adds a second thread costs more than it saves (measured on
// the course machines, whose two cores share their vector units).
constexpr Index kParallelWork = Index{1} << 24;

}  // namespace

// Parallel GEMM: the threads take disjoint bands of C's columns (or of its rows when C is
// narrow), each band a multiple of the tile size, and each runs the serial algorithm on its
// band. Every element of C is computed the same way whatever the band boundaries, so the
// result is bit-for-bit the same for any number of threads.
void gemm(const GemmShape& s, const float* a, Index lda, const float* b, Index ldb, float* c,
          Index ldc) {
  if (is_small(s)) {
    gemm_small(s, a, lda, b, ldb, c, ldc);
    return;
  }
  if (s.m * s.n * s.k < kParallelWork || num_threads() == 1) {
    gemm_serial(s, a, lda, b, ldb, c, ldc);
    return;
  }
  if (s.n >= 2 * NR) {
    parallel_for(s.n, NR, [&](Index begin, Index end) {
      GemmShape band = s;
      band.n = end - begin;
      const float* b_band = s.transpose_b ? b + begin * ldb : b + begin;
      gemm_serial(band, a, lda, b_band, ldb, c + begin, ldc);
    });
  } else {
    parallel_for(s.m, MR, [&](Index begin, Index end) {
      GemmShape band = s;
      band.m = end - begin;
      const float* a_band = s.transpose_a ? a + begin : a + begin * lda;
      gemm_serial(band, a_band, lda, b, ldb, c + begin * ldc, ldc);
    });
  }
}

void gemm(const GemmShape& s, const double* a, Index lda, const double* b, Index ldb, double* c,
          Index ldc) {
  // Reference loop order i-k-j: the inner loop runs along a row of C (and of B).
  for (Index i = 0; i < s.m; ++i) {
    double* crow = c + i * ldc;
    if (!s.accumulate) std::fill(crow, crow + s.n, 0.0);
    for (Index p = 0; p < s.k; ++p) {
      const double aip = s.transpose_a ? a[p * lda + i] : a[i * lda + p];
      if (!s.transpose_b) {
        const double* brow = b + p * ldb;
        for (Index j = 0; j < s.n; ++j) crow[j] += aip * brow[j];
      } else {
        for (Index j = 0; j < s.n; ++j) crow[j] += aip * b[j * ldb + p];
      }
    }
  }
}

}  // namespace attend
