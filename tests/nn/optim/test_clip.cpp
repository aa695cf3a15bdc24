// clip_grad_norm: the global norm over all gradients, and scaling above max_norm.
#include <cmath>
#include <limits>

#include "optim_support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("clip_grad_norm returns the global norm and scales above max_norm", "[optim]") {
  const DType dtype = GENERATE(kFloat64, kFloat32);
  // Gradients [3, 4] and [12]: norm = sqrt(9 + 16 + 144) = sqrt(169) = 13.
  Tensor a = parameter({0, 0}, dtype), b = parameter({0}, dtype), c = parameter({0}, dtype);
  set_grad(a, {3, 4});
  set_grad(b, {12});  // c has no gradient and is skipped
  const double norm = optim::clip_grad_norm({a, b, c}, 6.5);
  CHECK(norm == 13);
  // Scaled by 6.5 / (13 + 1e-6): [3, 4, 12] / 2 * (1 - 1e-6 / 13 approximately)
  const double scale = 6.5 / (13 + 1e-6);
  const double tolerance = dtype == kFloat64 ? 1e-14 : 1e-6;
  check_close(a.grad().data(), f64({3 * scale, 4 * scale}, {2}), tolerance);
  check_close(b.grad().data(), f64({12 * scale}, {1}), tolerance);
  CHECK(a.grad().dtype() == dtype);
  CHECK_FALSE(c.grad().defined());
  // The new norm is just under max_norm, so clipping again changes nothing.
  CHECK(optim::clip_grad_norm({a, b, c}, 6.5) < 6.5);
  check_close(b.grad().data(), f64({12 * scale}, {1}), tolerance);
}

TEST_CASE("clip_grad_norm leaves gradients below (or at) max_norm untouched", "[optim]") {
  Tensor a = parameter({0, 0}, kFloat64);
  set_grad(a, {3, 4});
  CHECK(optim::clip_grad_norm({a}, 20) == 5);
  check_close(a.grad().data(), f64({3, 4}, {2}), 0);
  CHECK(optim::clip_grad_norm({a}, 5) == 5);  // exactly at the limit: not scaled
  check_close(a.grad().data(), f64({3, 4}, {2}), 0);
}

TEST_CASE("clip_grad_norm accumulates in double", "[optim]") {
  // 10^6 float32 gradients of 1e-3: sum of squares 1, norm 1. A float32 running sum
  // would stall far from 1 once each 1e-6 is below half an ulp of the sum.
  Tensor p = zeros({1000, 1000}, kFloat32).requires_grad_();
  p.node()->grad = NDArray::full({1000, 1000}, 1e-3, kFloat32);
  CHECK_THAT(optim::clip_grad_norm({p}, 10), WithinAbs(1.0, 1e-6));
}

TEST_CASE("clip_grad_norm scales a gradient shared by two parameters once each", "[optim]") {
  // d/da and d/db of 3 sum(a + b) are both 3: backward may hand a and b the same array.
  Tensor a = parameter({1, 1}, kFloat64), b = parameter({1, 1}, kFloat64);
  (sum(a + b) * 3.0).backward();
  // norm = sqrt(4 * 9) = 6; max_norm 3 halves every gradient.
  CHECK(optim::clip_grad_norm({a, b}, 3) == 6);
  const double half = 3 * (3 / (6 + 1e-6));
  check_close(a.grad().data(), f64({half, half}, {2}), 1e-14);
  check_close(b.grad().data(), f64({half, half}, {2}), 1e-14);
}

TEST_CASE("clip_grad_norm with a non-finite gradient returns it and scales nothing", "[optim]") {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor a = parameter({0, 0}, kFloat64), b = parameter({0}, kFloat64);
  a.node()->grad = f64({inf, 1}, {2});
  set_grad(b, {100});
  CHECK(optim::clip_grad_norm({a, b}, 1) == inf);
  check_close(b.grad().data(), f64({100}, {1}), 0);
  a.node()->grad = f64({std::nan(""), 1}, {2});
  CHECK(std::isnan(optim::clip_grad_norm({a, b}, 1)));
  check_close(b.grad().data(), f64({100}, {1}), 0);
}

TEST_CASE("clip_grad_norm without gradients, and its errors", "[optim]") {
  Tensor a = parameter({1}, kFloat64);
  CHECK(optim::clip_grad_norm({a}, 1) == 0);
  CHECK(optim::clip_grad_norm({}, 1) == 0);
  CHECK_THAT(error_message([&] { optim::clip_grad_norm({a}, 0); }),
             Contains("clip_grad_norm: max_norm must be finite and > 0, got 0"));
  CHECK_THAT(error_message([&] {
               optim::clip_grad_norm({a, Tensor()}, 1);
             }),
             Contains("clip_grad_norm: parameter 1 is undefined"));
}
