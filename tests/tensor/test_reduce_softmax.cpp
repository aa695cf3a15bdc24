#include <cmath>
#include <limits>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("reductions along every axis, with and without keepdim", "[tensor]") {
  NDArray x = NDArray::arange(24, kFloat64).reshape({2, 3, 4});
  NDArray s0 = sum(x, 0), s1 = sum(x, 1), s2 = sum(x, -1);
  CHECK(s0.shape() == Shape{3, 4});
  CHECK(s1.shape() == Shape{2, 4});
  CHECK(s2.shape() == Shape{2, 3});
  CHECK(sum(x, 1, true).shape() == Shape{2, 1, 4});
  for (Index i = 0; i < 2; ++i)
    for (Index j = 0; j < 3; ++j)
      for (Index k = 0; k < 4; ++k) {
        double v0 = 0, v1 = 0, v2 = 0;
        for (Index a = 0; a < 2; ++a) v0 += x.at({a, j, k});
        for (Index a = 0; a < 3; ++a) v1 += x.at({i, a, k});
        for (Index a = 0; a < 4; ++a) v2 += x.at({i, j, a});
        CHECK(s0.at({j, k}) == v0);
        CHECK(s1.at({i, k}) == v1);
        CHECK(s2.at({i, j}) == v2);
      }
  check_close(mean(x, 2), sum(x, 2) / 4.0);
  CHECK(sum(x).item() == 276);
  CHECK(sum(x).ndim() == 0);
  CHECK(mean(x).item() == 11.5);
  check_close(max(x, 1), f64({8, 9, 10, 11, 20, 21, 22, 23}, {2, 4}));
  check_close(min(x, 2), f64({0, 4, 8, 12, 16, 20}, {2, 3}));
}

TEST_CASE("argmax takes the first maximum and returns int64", "[tensor]") {
  NDArray x = f64({1, 5, 5, 0, 7, 2}, {2, 3});
  NDArray a = argmax(x, 1);
  CHECK(a.dtype() == kInt64);
  CHECK(a.to_vector() == std::vector<double>{1, 1});
  CHECK(argmax(x, 0).to_vector() == std::vector<double>{0, 1, 0});
  CHECK(argmax(x, 1, true).shape() == Shape{2, 1});
}

TEST_CASE("logsumexp is stable for large values", "[tensor]") {
  NDArray x = f64({1000, 1000, -1000, 0}, {2, 2});
  NDArray l = logsumexp(x, 1);
  CHECK_THAT(l.at({0}), Catch::Matchers::WithinAbs(1000 + std::log(2.0), 1e-9));
  CHECK_THAT(l.at({1}), Catch::Matchers::WithinAbs(0.0, 1e-9));
  NDArray masked = f64({-INFINITY, -INFINITY}, {1, 2});
  CHECK(logsumexp(masked, 1).at({0}) == -INFINITY);
}

TEST_CASE("sum_to undoes broadcasting", "[tensor]") {
  NDArray g = NDArray::ones({4, 2, 3}, kFloat64);
  check_close(sum_to(g, {3}), f64({8, 8, 8}, {3}));
  check_close(sum_to(g, {2, 1}), f64({12, 12}, {2, 1}));
  check_close(sum_to(g, {}), NDArray::scalar(24, kFloat64));
  CHECK_THAT(error_message([&] { sum_to(g, {5}); }), Contains("sum_to"));
}

TEST_CASE("reduction errors name the axis", "[tensor][errors]") {
  NDArray x = NDArray::zeros({2, 3});
  CHECK_THAT(error_message([&] { sum(x, 2); }),
             Contains("sum: axis 2 is out of range for an array with 2 dimensions"));
  CHECK_THAT(error_message([&] {
               max(NDArray::zeros({0, 3}), 0);
             }),
             Contains("max: cannot reduce an axis of size 0"));
}

TEST_CASE("softmax rows sum to one and masked positions get exactly zero", "[tensor]") {
  Generator gen(5);
  NDArray x = NDArray::normal({4, 7}, gen, 0, 3, kFloat64);
  NDArray y = softmax(x, 1);
  for (double s : sum(y, 1).to_vector()) CHECK_THAT(s, Catch::Matchers::WithinAbs(1.0, 1e-12));
  check_close(log_softmax(x, 1), log(y), 1e-12);
  // Along the first axis.
  for (double s : sum(softmax(x, 0), 0).to_vector())
    CHECK_THAT(s, Catch::Matchers::WithinAbs(1.0, 1e-12));
  // -inf scores are masked keys: weight exactly 0.
  NDArray scores = f64({1, 2, -INFINITY, -INFINITY, -INFINITY, -INFINITY}, {2, 3});
  NDArray w = softmax(scores, 1);
  CHECK(w.at({0, 2}) == 0.0);
  CHECK_THAT(w.at({0, 0}) + w.at({0, 1}), Catch::Matchers::WithinAbs(1.0, 1e-15));
  CHECK(w.at({1, 0}) == 0.0);  // an all-masked row is all zeros, not NaN
  // Stable for huge inputs.
  NDArray big = f64({1e4, 0}, {1, 2});
  CHECK(softmax(big, 1).at({0, 0}) == 1.0);
}

TEST_CASE("softmax and log_softmax keep NaN: a row of NaN is not a masked row", "[tensor]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {kFloat32, kFloat64}) {
    // Rows: all NaN, NaN beside -inf (the max skips both), NaN beside a number, all -inf.
    NDArray x = NDArray::from_list({nan, nan, nan, -inf, nan, 1, -inf, -inf}, {4, 2}, dtype);
    for (NDArray y : {softmax(x, 1), log_softmax(x, 1)})
      for (int i = 0; i < 6; ++i) CHECK(std::isnan(y.to_vector()[static_cast<std::size_t>(i)]));
    CHECK(softmax(x, 1).to_vector()[6] == 0);         // the fully masked row is still 0 ...
    CHECK(log_softmax(x, 1).to_vector()[7] == -inf);  // ... and -inf in log space
  }
}
