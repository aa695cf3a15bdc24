// The float32 GEMM, in the style of BLIS (Van Zee and van de Geijn, 2015) and Goto's
// "Anatomy of high-performance matrix multiplication" (2008):
//
//   for each panel of NC columns of B                      (B panel lives in L3)
//     for each block of KC rows of B / columns of A        (one rank-KC update of C)
//       pack the KC x NC panel of op(B) into slivers NR wide
//       for each block of MC rows of op(A)                 (A block lives in L2)
//         pack the MC x KC block of op(A) into slivers MR tall
//         for each B sliver (KC x NR, stays in L1)
//           for each MR rows of A: the micro-kernel adds the MR x NR product into C
//
// The micro-kernel (gemm_kernel.cpp) keeps a whole MR x NR tile of C in vector registers
// (12 x 32 floats = 24 AVX-512 registers) and, for each k, does MR broadcast-multiply-adds with
// two vectors of B. Packing puts the numbers it reads in exactly the order it reads them, so
// every load is contiguous and the blocks stay in their caches however large A and B are.
//
// Packing is a copy, though, and on small products it costs as much as the arithmetic (see
// read_a_in_place below). The kernel reads A one number at a time, so it can take A's rows
// where they are; and it reads B a row of a sliver at a time, which in a B that is not
// transposed is NR consecutive numbers of one of B's rows. So a product with few columns reads
// A in place, and one with few rows reads B in place (but for a last sliver narrower than NR,
// which is copied with zeros after its columns: the kernel reads all NR). The tiles at C's
// bottom and right edges go through the kernel too, which computes only their rows and
// stores only their columns.
//
// A caller that can write B in the packed layout to begin with (GemmShape::b_packed; conv2d's
// im2col does) saves the copy altogether.
//
// Whatever is packed or not, every element of C is the same sum in the same order: over each
// K block, one fused multiply-add per k from 0, the blocks added to C one after the other
// (tests/tensor/test_gemm_order.cpp checks it bit for bit). Only the way M and N are cut into
// tiles and where the numbers are read from depend on the shape.
#include "tensor/gemm.h"

#include <algorithm>

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

#include "tensor/allocator.h"
#include "tensor/error.h"
#include "tensor/gemm_kernel.h"
#include "tensor/parallel.h"

namespace attend {
namespace {

using gemm_detail::MR;
using gemm_detail::NR;
using gemm_detail::TileA;

constexpr Index KC = 256;
constexpr Index MC = MR * 12;
constexpr Index NC = NR * 32;
// Products with at most this many rows, or this many multiply-adds, are not packed.
constexpr Index kSmallRows = 2;
constexpr Index kSmallWork = Index{1} << 14;

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
// element (i, k) at [k * MR + i] (the last sliver may have fewer rows: the kernel reads only
// the rows it is asked for).
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
  }
}

// A transposed B, packed: dst[k * NR + j] = src[j * ldb + k] for k < kc, j < cols, and 0 for
// j >= cols. Column j of the sliver is row j of B. Squares of kLanes x kLanes numbers are
// transposed in registers (kLanes rows of B loaded as vectors, zeros for the rows past `cols`,
// kLanes rows of the sliver stored as vectors), the k past the last whole square one number
// at a time. Only a copy: the bits are those of B.
#if defined(__AVX512F__)
constexpr Index kTransposeSquare = 16;
// GCC 12 warns that the "undefined" vector its own headers pass to the shuffles' unused
// merge operand is uninitialised (GCC bug 105593); the warning is about the header, not here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // the same, in a Debug build
#endif
// 16 rows of 16 floats, src[r * lds + c] (0 for r >= rows), to dst[c * ldd + r].
inline void transpose_square(const float* src, Index lds, Index rows, float* dst, Index ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i)
    r[i] = i < rows ? _mm512_loadu_ps(src + i * lds) : _mm512_setzero_ps();
  // Pairs of rows interleaved: t[2i] holds (r[2i][c], r[2i+1][c]) for c = 0, 1 of each 128-bit
  // lane's four columns, t[2i+1] for c = 2, 3.
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // Four rows per lane: r[4i + c] holds rows 4i..4i+3 of column c of each lane's four columns.
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Lanes regrouped: for c < 4, t[c] holds column c (lanes: rows 0-3, 4-7 of columns c and
  // c + 8), t[c + 4] the same for columns c + 4 and c + 12; t[8 + ..] for rows 8-15.
  for (int h = 0; h < 2; ++h)
    for (int c = 0; c < 4; ++c) {
      t[8 * h + c] = _mm512_shuffle_f32x4(r[8 * h + c], r[8 * h + 4 + c], 0x88);
      t[8 * h + 4 + c] = _mm512_shuffle_f32x4(r[8 * h + c], r[8 * h + 4 + c], 0xDD);
    }
  for (int c = 0; c < 8; ++c) {
    _mm512_storeu_ps(dst + c * ldd, _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88));
    _mm512_storeu_ps(dst + (c + 8) * ldd, _mm512_shuffle_f32x4(t[c], t[8 + c], 0xDD));
  }
}
#pragma GCC diagnostic pop
#elif defined(__AVX__)
constexpr Index kTransposeSquare = 8;
// 8 rows of 8 floats, src[r * lds + c] (0 for r >= rows), to dst[c * ldd + r].
inline void transpose_square(const float* src, Index lds, Index rows, float* dst, Index ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i)
    r[i] = i < rows ? _mm256_loadu_ps(src + i * lds) : _mm256_setzero_ps();
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // r[c] (c < 4) holds rows 0-3 of columns c and c + 4, r[4 + c] rows 4-7.
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + c * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x20));
    _mm256_storeu_ps(dst + (c + 4) * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x31));
  }
}
#else
constexpr Index kTransposeSquare = 4;
inline void transpose_square(const float* src, Index lds, Index rows, float* dst, Index ldd) {
  for (Index r = 0; r < kTransposeSquare; ++r)
    for (Index c = 0; c < kTransposeSquare; ++c) dst[c * ldd + r] = r < rows ? src[r * lds + c] : 0;
}
#endif
static_assert(NR % kTransposeSquare == 0, "a sliver is a whole number of squares wide");

void pack_transposed_sliver(const float* src, Index ldb, Index kc, Index cols, float* dst) {
  const Index k_whole = kc - kc % kTransposeSquare;
  for (Index k = 0; k < k_whole; k += kTransposeSquare)
    for (Index j = 0; j < NR; j += kTransposeSquare) {
      const Index rows = std::clamp<Index>(cols - j, 0, kTransposeSquare);
      transpose_square(src + j * ldb + k, ldb, rows, dst + k * NR + j, NR);
    }
  for (Index k = k_whole; k < kc; ++k)
    for (Index j = 0; j < NR; ++j) dst[k * NR + j] = j < cols ? src[j * ldb + k] : 0;
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
      pack_transposed_sliver(b + (j0 + s) * ldb + k0, ldb, kc, cols, dst);
    }
  }
}

// Packing copies an operand so that the kernel's reads are contiguous and stay in cache over
// the whole product. Its cost is paid once per block and spread over the block's reuses. A
// block of A is reused by every sliver of B's columns: packing it (a scalar transpose) takes
// about a cycle per number, the multiply-adds N / 32 cycles per number (16 lanes, two FMA
// units), so at N = 64 packing A takes half as long as the arithmetic. A sliver of B is reused
// by every MR rows of A, and must stay in the L1 cache meanwhile: read in place, its KC rows
// sit ldb floats apart, and when that is a large power of two they all fall in the same few
// cache sets and evict each other (measured: 64 x 2048 x 2048 took 20% longer with B in place).
// So A is read in place when C is narrow, B when C has few rows and the K block of B spans
// little memory; otherwise packing costs a few percent and keeps large products fast.
constexpr Index kAInPlaceMaxN = 256;       // read A in place when C has at most this many columns
constexpr Index kBInPlaceMaxM = 128;       // read B in place when C has at most this many rows
constexpr Index kBInPlaceMaxSpan = 16384;  // ... and a K block of B spans at most this many floats

bool read_a_in_place(const GemmShape& s) {
  return s.n <= kAInPlaceMaxN;
}
// A transposed B must be packed: the kernel reads rows of op(B) as vectors.
bool read_b_in_place(const GemmShape& s, Index ldb) {
  return !s.transpose_b && s.m <= kBInPlaceMaxM && std::min(s.k, KC) * ldb <= kBInPlaceMaxSpan;
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
  const bool pack_a_block = !read_a_in_place(s);
  const bool pack_b_panel = !s.b_packed && !read_b_in_place(s, ldb);
  for (Index jc = 0; jc < s.n; jc += NC) {
    const Index nc = std::min(NC, s.n - jc);
    const Index nc_whole = nc - nc % NR;  // columns in whole slivers
    for (Index pc = 0; pc < s.k; pc += KC) {
      const Index kc = std::min(KC, s.k - pc);
      if (pack_b_panel)
        pack_b(b, ldb, s.transpose_b, pc, kc, jc, nc, buffers.b);
      else if (nc_whole < nc &&
               !s.b_packed)  // B in place, but the kernel reads NR columns: pad the last sliver
        pack_b(b, ldb, false, pc, kc, jc + nc_whole, nc - nc_whole, buffers.b);
      const bool add_to_c = s.accumulate || pc > 0;  // later K blocks add to the first
      for (Index ic = 0; ic < s.m; ic += MC) {
        const Index mc = std::min(MC, s.m - ic);
        if (pack_a_block) pack_a(a, lda, s.transpose_a, ic, mc, pc, kc, buffers.a);
        for (Index jr = 0; jr < nc; jr += NR) {
          const int cols = static_cast<int>(std::min<Index>(NR, nc - jr));
          const float* bp = buffers.b + jr * kc;  // packed: row k of the sliver at bp + k * NR
          Index b_ld = NR;
          if (s.b_packed) {  // sliver (jc + jr) / NR, from row pc
            bp = b + (jc + jr) * s.k + pc * NR;
          } else if (!pack_b_panel) {
            bp = jr < nc_whole ? b + pc * ldb + jc + jr : buffers.b;
            b_ld = jr < nc_whole ? ldb : NR;
          }
          for (Index ir = 0; ir < mc; ir += MR) {
            const int rows = static_cast<int>(std::min<Index>(MR, mc - ir));
            const Index i = ic + ir;
            TileA tile_a{buffers.a + ir * kc, MR, false};
            if (!pack_a_block)
              tile_a = s.transpose_a ? TileA{a + pc * lda + i, lda, false}
                                     : TileA{a + i * lda + pc, lda, true};
            gemm_detail::multiply_tile(kc, tile_a, bp, b_ld, c + i * ldc + jc + jr, ldc, rows, cols,
                                       add_to_c);
          }
        }
      }
    }
  }
}

// Small products: a matrix-vector product in an attention step, or [1,25] @ [25,128], costs
// less than packing its operands would. Plain loops, vectorised along a row of C (or along
// k for a transposed B, as dot products). This file is compiled with -ffp-contract=fast, so
// that from -O2 on `crow[j] += aip * brow[j]` is one fused multiply-add.
void gemm_small(const GemmShape& s, const float* a, Index lda, const float* b, Index ldb, float* c,
                Index ldc) {
  for (Index i = 0; i < s.m; ++i) {
    float* crow = c + i * ldc;
    if (!s.accumulate) std::fill(crow, crow + s.n, 0.0f);
    if (s.b_packed) {  // the same, one sliver of B's columns at a time
      for (Index j0 = 0; j0 < s.n; j0 += NR) {
        const Index width = std::min<Index>(NR, s.n - j0);
        for (Index p = 0; p < s.k; ++p) {
          const float aip = s.transpose_a ? a[p * lda + i] : a[i * lda + p];
          const float* brow = b + j0 * s.k + p * NR;
#pragma omp simd
          for (Index j = 0; j < width; ++j) crow[j0 + j] += aip * brow[j];
        }
      }
    } else if (!s.transpose_b) {
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

// Below this many multiply-adds a second thread costs more than it saves. From 64x64x64 on,
// two threads beat one on the course's 2-core machine (bench_gemm, ATTEND_NUM_THREADS=2:
// 64x64x64 about 100 -> 156 GFLOP/s, 2048x64x64 100 -> 174 when this went down from 2^24,
// once the pool's workers spin briefly between jobs instead of sleeping: see parallel.cpp
// and bench/README.md, "The second thread").
constexpr Index kParallelWork = Index{1} << 18;

}  // namespace

// Products this small skip packing (see gemm_small).
bool gemm_uses_small_loops(const GemmShape& s) {
  return s.m <= kSmallRows || s.m * s.n * s.k <= kSmallWork;
}

// Parallel GEMM: the threads take disjoint bands of C's columns (or of its rows when C is
// narrow), each band a multiple of the tile size, and each runs the serial algorithm on its
// band. Every element of C is computed the same way whatever the band boundaries, so the
// result is bit-for-bit the same for any number of threads.
void gemm(const GemmShape& s, const float* a, Index lda, const float* b, Index ldb, float* c,
          Index ldc) {
  if (s.b_packed && s.transpose_b) fail("gemm: a packed B cannot also be transposed");
  if (gemm_uses_small_loops(s)) {
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
      const float* b_band = s.b_packed      ? b + begin * s.k
                            : s.transpose_b ? b + begin * ldb
                                            : b + begin;
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
  if (s.b_packed && s.transpose_b) fail("gemm: a packed B cannot also be transposed");
  // Reference loop order i-k-j: the inner loop runs along a row of C (and of B).
  if (s.b_packed) {  // B(p, j) in sliver j / NR
    for (Index i = 0; i < s.m; ++i) {
      double* crow = c + i * ldc;
      if (!s.accumulate) std::fill(crow, crow + s.n, 0.0);
      for (Index p = 0; p < s.k; ++p) {
        const double aip = s.transpose_a ? a[p * lda + i] : a[i * lda + p];
        for (Index j = 0; j < s.n; ++j) crow[j] += aip * b[(j / NR) * NR * s.k + p * NR + j % NR];
      }
    }
    return;
  }
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

Index gemm_sliver_width() {
  return NR;
}

Index gemm_k_block() {
  return KC;
}

Index gemm_threaded_work() {
  return kParallelWork;
}

Index gemm_packed_b_size(Index k, Index n) {
  return (n + NR - 1) / NR * NR * k;
}

}  // namespace attend
