// The float32 GEMM's results are bit for bit those of one fixed summation order, whatever path
// (packed or read in place, full or edge tile, one thread or two) computes them: every lesson's
// printed numbers depend on it. The reference below is that order written out one element at a
// time; the kernel must match it exactly, not within a tolerance.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support.h"
#include "tensor/gemm.h"

using namespace attend;
using namespace attend::testing;

namespace {

// The order (tensor/gemm.cpp): K is cut into blocks of 256 (the kernel's KC). Within a block,
// one accumulator starts at 0 and takes a fused multiply-add per k, k increasing; the first
// block's sum is written to C (or added to C when accumulating), each later block's sum is
// added to C.
constexpr Index kReferenceKBlock = 256;

// One step of that chain, acc + x * y, as the kernel takes it in this build: one rounding
// where the processor has fused multiply-add (x86-64-v3 and newer), else the product rounded
// to float and then the sum (the kernel's fallback; with no FMA instruction in the build, the
// compiler cannot fuse them here either).
float multiply_add(float x, float y, float acc) {
#if defined(__FMA__)
  return std::fma(x, y, acc);
#else
  const float product = x * y;
  return acc + product;
#endif
}

struct Matrix {
  Index rows = 0, cols = 0, ld = 0;  // ld > cols: rows are padded, as in a view of a wider array
  std::vector<float> data;
  float& at(Index i, Index j) { return data[i * ld + j]; }
  float at(Index i, Index j) const { return data[i * ld + j]; }
};

Matrix random_matrix(Index rows, Index cols, Index padding, Generator& gen) {
  Matrix x{rows, cols, cols + padding, {}};
  x.data.resize(static_cast<std::size_t>(rows * x.ld));
  for (float& v : x.data) v = static_cast<float>(gen.normal());
  return x;
}

// C = op(A) op(B) (or C +=) in the order above.
void reference_gemm(const GemmShape& s, const Matrix& a, const Matrix& b, Matrix& c) {
  for (Index i = 0; i < s.m; ++i)
    for (Index j = 0; j < s.n; ++j) {
      float out = c.at(i, j);
      for (Index p0 = 0; p0 < s.k; p0 += kReferenceKBlock) {
        float acc = 0;
        for (Index p = p0; p < std::min(s.k, p0 + kReferenceKBlock); ++p) {
          const float x = s.transpose_a ? a.at(p, i) : a.at(i, p);
          const float y = s.transpose_b ? b.at(j, p) : b.at(p, j);
          acc = multiply_add(x, y, acc);
        }
        out = (p0 == 0 && !s.accumulate) ? acc : out + acc;
      }
      c.at(i, j) = out;
    }
}

// Runs gemm and the reference on the same random operands; returns how many elements differ
// in any bit (padding included: gemm must not write past a row's end).
Index count_differences(Index m, Index n, Index k, bool ta, bool tb, bool accumulate,
                        Generator& gen) {
  const Index pad = 3;
  Matrix a = ta ? random_matrix(k, m, pad, gen) : random_matrix(m, k, pad, gen);
  Matrix b = tb ? random_matrix(n, k, pad, gen) : random_matrix(k, n, pad, gen);
  Matrix c = random_matrix(m, n, pad, gen), expected = c;
  GemmShape s{
      .m = m, .n = n, .k = k, .transpose_a = ta, .transpose_b = tb, .accumulate = accumulate};
  gemm(s, a.data.data(), a.ld, b.data.data(), b.ld, c.data.data(), c.ld);
  reference_gemm(s, a, b, expected);
  Index differ = 0;
  for (std::size_t i = 0; i < c.data.size(); ++i)
    differ +=
        std::bit_cast<std::uint32_t>(c.data[i]) != std::bit_cast<std::uint32_t>(expected.data[i]);
  return differ;
}

}  // namespace

// Products of at most 2 rows or 2^14 multiply-adds take gemm's plain-loop path, which has its
// own order; every shape here is larger. Together they reach: tiles cut at the bottom (M not a
// multiple of 12) and right (N not a multiple of 32) edges, N below one vector (16), K over
// one and two K blocks, M over one row block (144), N over one column panel (1024), tiny M
// or N with a long K, the benchmark's shapes, and every transpose, with and without
// accumulation.
TEST_CASE("float32 GEMM is bit-identical to its reference summation order", "[tensor]") {
  Generator gen(14);
  const Index shapes[][3] = {
      // m, n, k
      {64, 64, 64}, {32, 128, 128}, {13, 33, 60},    {25, 65, 300}, {150, 40, 260}, {3, 5, 2000},
      {3, 7, 1200}, {40, 1, 600},   {100, 2, 100},   {12, 32, 700}, {11, 15, 200},  {27, 48, 513},
      {7, 200, 40}, {200, 20, 64},  {150, 1030, 24}, {64, 2048, 9}, {2048, 8, 9},   {97, 131, 257}};
  for (auto [m, n, k] : shapes)
    for (int t = 0; t < 8; ++t) {
      const bool ta = t & 1, tb = t & 2, accumulate = t & 4;
      INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb
                << " accumulate=" << accumulate);
      CHECK(count_differences(m, n, k, ta, tb, accumulate, gen) == 0);
    }
}

TEST_CASE("float32 GEMM split between two threads keeps the reference order", "[tensor]") {
  // Large enough (over 2^24 multiply-adds) for gemm to split C between threads.
  Generator gen(15);
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    INFO("ta=" << ta << " tb=" << tb);
    ThreadCount two(2);
    CHECK(count_differences(200, 333, 260, ta, tb, false, gen) == 0);
  }
}
