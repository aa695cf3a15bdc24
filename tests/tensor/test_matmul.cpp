#include "support.h"
#include "tensor/gemm.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {
// C = op(A) op(B) by the definition, in double.
NDArray reference(const NDArray& a, const NDArray& b, bool ta, bool tb) {
  NDArray a2 = ta ? transpose(a) : a, b2 = tb ? transpose(b) : b;
  Index m = a2.size(0), k = a2.size(1), n = b2.size(1);
  NDArray c = NDArray::zeros({m, n}, kFloat64);
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < n; ++j) {
      double s = 0;
      for (Index p = 0; p < k; ++p) s += a2.at({i, p}) * b2.at({p, j});
      c.set({i, j}, s);
    }
  return c;
}
}  // namespace

TEST_CASE("float32 GEMM matches the definition on awkward sizes and transposes", "[tensor]") {
  Generator gen(11);
  // Sizes around the kernel's tile (12 x 32) and block (KC = 256) edges.
  const Index sizes[][3] = {{1, 1, 1},     {5, 7, 3},      {12, 32, 8},  {13, 33, 17},
                            {25, 65, 300}, {150, 40, 260}, {64, 64, 64}, {3, 100, 1}};
  for (auto [m, n, k] : sizes)
    for (int t = 0; t < 4; ++t) {
      bool ta = t & 1, tb = t & 2;
      NDArray a = NDArray::normal(ta ? Shape{k, m} : Shape{m, k}, gen);
      NDArray b = NDArray::normal(tb ? Shape{n, k} : Shape{k, n}, gen);
      INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb);
      NDArray c = matmul(a, b, ta, tb);
      // float32 sums of k products: error grows like sqrt(k) * 1e-7.
      check_close(c.to(kFloat64), reference(a.to(kFloat64), b.to(kFloat64), ta, tb),
                  2e-5 * (1 + k / 16.0));
      check_close(matmul(a.to(kFloat64), b.to(kFloat64), ta, tb),
                  reference(a.to(kFloat64), b.to(kFloat64), ta, tb), 1e-12);
    }
}

TEST_CASE("GEMM can accumulate into C", "[tensor]") {
  NDArray a = f64({1, 2, 3, 4}, {2, 2}), b = f64({1, 0, 0, 1}, {2, 2});
  NDArray c = NDArray::ones({2, 2}, kFloat64);
  GemmShape s{.m = 2, .n = 2, .k = 2, .accumulate = true};
  gemm(s, a.data<double>(), 2, b.data<double>(), 2, c.data<double>(), 2);
  check_close(c, f64({2, 3, 4, 5}, {2, 2}));
  NDArray af = a.to(kFloat32), bf = b.to(kFloat32), cf = NDArray::ones({2, 2});
  gemm(s, af.data<float>(), 2, bf.data<float>(), 2, cf.data<float>(), 2);
  check_close(cf.to(kFloat64), f64({2, 3, 4, 5}, {2, 2}));
}

TEST_CASE("batched matmul broadcasts the batch dimensions", "[tensor]") {
  Generator gen(2);
  NDArray a = NDArray::normal({3, 4, 5}, gen, 0, 1, kFloat64);
  NDArray w = NDArray::normal({5, 2}, gen, 0, 1, kFloat64);
  NDArray bb = NDArray::normal({3, 5, 2}, gen, 0, 1, kFloat64);
  NDArray one = NDArray::normal({1, 4, 5}, gen, 0, 1, kFloat64);
  NDArray aw = matmul(a, w), ab = matmul(a, bb), ob = matmul(one, bb);
  REQUIRE(aw.shape() == Shape{3, 4, 2});
  REQUIRE(ob.shape() == Shape{3, 4, 2});
  for (Index i = 0; i < 3; ++i) {
    auto entry = [&](const NDArray& x, Index j) {
      return slice(x, 0, j, j + 1).reshape({x.size(1), x.size(2)});
    };
    check_close(entry(aw, i), reference(entry(a, i), w, false, false), 1e-12);
    check_close(entry(ab, i), reference(entry(a, i), entry(bb, i), false, false), 1e-12);
    check_close(entry(ob, i), reference(entry(one, 0), entry(bb, i), false, false), 1e-12);
  }
  // Four dimensions, as in multi-head attention: [B,H,T,D] @ [B,H,D,T].
  NDArray q = NDArray::normal({2, 3, 4, 5}, gen), k = NDArray::normal({2, 3, 4, 5}, gen);
  CHECK(matmul(q, k, false, true).shape() == Shape{2, 3, 4, 4});
}

TEST_CASE("matmul errors name both shapes", "[tensor][errors]") {
  NDArray a = NDArray::zeros({3, 4}), b = NDArray::zeros({5, 6});
  CHECK_THAT(error_message([&] { matmul(a, b); }),
             Contains("matmul: [3,4] @ [5,6]: inner dimensions 4 and 5 differ"));
  CHECK(matmul(a, NDArray::zeros({3, 4}), false, true).shape() == Shape{3, 3});  // [3,4] @ [3,4]^T
  CHECK_THAT(error_message([&] {
               matmul(a, NDArray::zeros({3, 5}), false, true);
             }),
             Contains("matmul: [3,4] @ [3,5]^T: inner dimensions 4 and 5 differ"));
  CHECK_THAT(error_message([&] { matmul(NDArray::zeros({4}), a); }),
             Contains("both inputs need at least 2 dimensions"));
  CHECK_THAT(error_message([&] {
               matmul(NDArray::zeros({2, 3, 4}), NDArray::zeros({3, 4, 2}));
             }),
             Contains("matmul (batch dimensions): shapes [2] and [3] cannot be broadcast"));
}
