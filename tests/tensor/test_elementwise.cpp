#include <algorithm>
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("binary ops broadcast like NumPy", "[tensor]") {
  NDArray m = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray row = f64({10, 20, 30}, {3});
  NDArray col = f64({100, 200}, {2, 1});
  check_close(m + row, f64({11, 22, 33, 14, 25, 36}, {2, 3}));
  check_close(m + col, f64({101, 102, 103, 204, 205, 206}, {2, 3}));
  check_close(col * row, f64({1000, 2000, 3000, 2000, 4000, 6000}, {2, 3}));  // outer product
  check_close(m - 1.0, f64({0, 1, 2, 3, 4, 5}, {2, 3}));
  check_close(2.0 / f64({1, 4}, {2}), f64({2, 0.5}, {2}));
  // A broadcast in the middle: [2,1,3] with [1,4,1] gives [2,4,3].
  NDArray a = NDArray::arange(6, kFloat64).reshape({2, 1, 3});
  NDArray b = NDArray::arange(4, kFloat64).reshape({1, 4, 1});
  NDArray c = a * b;
  REQUIRE(c.shape() == Shape{2, 4, 3});
  for (Index i = 0; i < 2; ++i)
    for (Index j = 0; j < 4; ++j)
      for (Index k = 0; k < 3; ++k) CHECK(c.at({i, j, k}) == a.at({i, 0, k}) * b.at({0, j, 0}));
}

TEST_CASE("broadcasting errors name the op and both shapes", "[tensor][errors]") {
  NDArray a = NDArray::zeros({2, 3}), b = NDArray::zeros({4});
  CHECK_THAT(error_message([&] { add(a, b); }),
             Contains("add: shapes [2,3] and [4] cannot be broadcast"));
  CHECK_THAT(error_message([&] { mul(a, NDArray::zeros({3}, kFloat64)); }),
             Contains("mul: dtypes float32 and float64 differ"));
  CHECK_THAT(error_message([&] { exp(NDArray::zeros({2}, kInt64)); }),
             Contains("exp: needs a floating-point array"));
}

TEST_CASE("unary math", "[tensor]") {
  NDArray x = f64({-2, -0.5, 0, 0.5, 3}, {5});
  check_close(relu(x), f64({0, 0, 0, 0.5, 3}, {5}));
  // NaN passes through ReLU (in both dtypes, and in the vectorised body of a longer array),
  // and -0 becomes +0 as before.
  for (DType dtype : {kFloat32, kFloat64}) {
    NDArray with_nan = NDArray::zeros({37}, kFloat64);
    with_nan.set({3}, std::nan(""));
    with_nan.set({20}, -1.0);
    with_nan.set({21}, -0.0);
    const std::vector<double> r = relu(with_nan.to(dtype)).to_vector();
    CHECK(std::isnan(r[3]));
    CHECK(r[20] == 0);
    CHECK_FALSE(std::signbit(r[21]));
    CHECK(std::count_if(r.begin(), r.end(), [](double v) { return std::isnan(v); }) == 1);
  }
  check_close(abs(x), f64({2, 0.5, 0, 0.5, 3}, {5}));
  check_close(sign(x), f64({-1, -1, 0, 1, 1}, {5}));
  check_close(pow(x, 2), f64({4, 0.25, 0, 0.25, 9}, {5}));
  check_close(clamp(x, -1, 1), f64({-1, -0.5, 0, 0.5, 1}, {5}));
  std::vector<double> v = x.to_vector();
  std::vector<double> s = sigmoid(x).to_vector(), t = tanh(x).to_vector(), g = gelu(x).to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) {
    CHECK_THAT(s[i], Catch::Matchers::WithinAbs(1 / (1 + std::exp(-v[i])), 1e-15));
    CHECK_THAT(t[i], Catch::Matchers::WithinAbs(std::tanh(v[i]), 1e-15));
    CHECK_THAT(g[i], Catch::Matchers::WithinAbs(0.5 * v[i] * (1 + std::erf(v[i] / std::sqrt(2.0))),
                                                1e-15));
  }
  // sigmoid of a very negative number is 0, not NaN.
  CHECK(sigmoid(NDArray::scalar(-1000)).item() == 0);
}

TEST_CASE("gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", "[tensor]") {
  // By hand at x = 1: u = 0.7978845608 * 1.044715 = 0.8335625, tanh(u) = 0.6822380,
  // y = 0.5 * 1.6822380 = 0.8411920 (exact GELU: 0.8413447).
  NDArray x = f64({-3, -1, -0.5, 0, 0.5, 1, 2}, {7});
  NDArray expected = f64({-0.0036373920817729943, -0.15880800939172324, -0.15428599017485606, 0,
                          0.34571400982514394, 0.8411919906082768, 1.954597694087775},
                         {7});
  check_close(gelu_tanh(x), expected, 1e-15);
  check_close(gelu_tanh(x.to(kFloat32)).to(kFloat64), expected, 1e-6);  // the vectorised tanh
  // The approximation stays within 5e-4 of the exact GELU (its largest gap is 4.7e-4).
  NDArray grid = NDArray::arange(-6, 6, 0.01, kFloat64);
  std::vector<double> a = gelu_tanh(grid).to_vector(), e = gelu(grid).to_vector();
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - e[i]) < 5e-4);
}

TEST_CASE("comparisons, where and masked_fill", "[tensor]") {
  NDArray a = f64({1, 2, 3}, {3}), b = f64({2, 2, 2}, {3});
  check_close(lt(a, b), f64({1, 0, 0}, {3}));
  check_close(ge(a, b), f64({0, 1, 1}, {3}));
  check_close(eq(a, b), f64({0, 1, 0}, {3}));
  check_close(where(gt(a, b), a, b), f64({2, 2, 3}, {3}));
  NDArray scores = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray mask = f64({0, 0, 1}, {3});  // mask the last key in every row
  check_close(masked_fill(scores, mask, -1e9), f64({1, 2, -1e9, 4, 5, -1e9}, {2, 3}));
  CHECK_THAT(error_message([&] {
               masked_fill(scores, f64({1, 0}, {2}), 0);
             }),
             Contains("masked_fill: shapes [2,3] and [2] cannot be broadcast"));
  CHECK_THAT(error_message([&] { broadcast_to(scores, {3, 3}); }), Contains("broadcast_to"));
  check_close(broadcast_to(f64({1, 2}, {2, 1}), {2, 2}), f64({1, 1, 2, 2}, {2, 2}));
}

TEST_CASE("map applies a formula elementwise, in place ops mutate", "[tensor]") {
  NDArray g = f64({1, 2}, {2}), y = f64({0.5, -0.5}, {2});
  check_close(map(g, y, [](auto g, auto y) { return g * (1 - y * y); }), f64({0.75, 1.5}, {2}));
  CHECK_THAT(error_message([&] { map(g, f64({1}, {1}), [](auto a, auto b) { return a + b; }); }),
             Contains("map: shapes [2] and [1] differ"));
  NDArray acc = NDArray::zeros({2}, kFloat64);
  add_(acc, g, 3);
  check_close(acc, f64({3, 6}, {2}));
  mul_(acc, 0.5);
  check_close(acc, f64({1.5, 3}, {2}));
  fill_(acc, 7);
  check_close(acc, f64({7, 7}, {2}));
  copy_(acc, y);
  check_close(acc, y);
}

TEST_CASE("long broadcast rows match a reference loop", "[tensor]") {
  Generator gen(3);
  NDArray a = NDArray::normal({3, 5, 37}, gen), b = NDArray::normal({5, 1}, gen);
  NDArray c = sub(a, b);
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 5; ++j)
      for (Index k = 0; k < 37; ++k)
        CHECK(c.at({i, j, k}) == static_cast<float>(a.at({i, j, k}) - b.at({j, 0})));
}
