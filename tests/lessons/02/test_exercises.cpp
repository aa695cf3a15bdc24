// Exercise checks for docs/02_autograd.md. Each test passes with the reference solution in
// lessons/02_autograd/custom_ops.cpp and checks what any correct solution must do: put your
// own code in the reference function's place and run `ctest --test-dir build -L lesson02`.
#include <cmath>

#include "lessons/02_autograd/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson02;
using Catch::Matchers::WithinAbs;

TEST_CASE("exercise check: softplus as a custom op, values", "[lesson02]") {
  Tensor x = tensor({-3.0, -0.5, 0.0, 0.5, 3.0}, kFloat64);
  std::vector<double> y = softplus_reference(x).data().to_vector();
  std::vector<double> in = x.data().to_vector();
  for (std::size_t i = 0; i < in.size(); ++i)
    CHECK_THAT(y[i], WithinAbs(std::log(1 + std::exp(in[i])), 1e-15));
  // Far from 0: no overflow to inf for large x, and no log(1) = 0 rounding for very negative x.
  std::vector<double> far =
      softplus_reference(tensor({1000.0, -50.0}, kFloat64)).data().to_vector();
  CHECK(far[0] == 1000.0);
  CHECK_THAT(far[1], WithinAbs(std::exp(-50.0), 1e-30));
  CHECK(far[1] > 0);
  // float32 too (no double-only code).
  CHECK(std::isfinite(softplus_reference(tensor({100.0})).item()));
}

TEST_CASE("exercise check: softplus as a custom op, an input changed in place is caught",
          "[lesson02]") {
  // The backward reads x: kept as a SavedArray, a change of x between the forward and
  // backward() stops backward() instead of giving the gradient at the new values.
  Tensor x = tensor({-1.0, 0.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = softplus_reference(x);
  x.data().set({0}, 5.0);
  CHECK_THROWS_WITH(sum(y).backward(),
                    Catch::Matchers::Contains("its saved input [3] was modified in place"));
}

TEST_CASE("exercise check: softplus as a custom op, gradcheck", "[lesson02][gradcheck]") {
  Generator gen(11);
  Tensor x = Tensor(NDArray::normal({3, 4}, gen, 0, 4, kFloat64), true);
  GradcheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return softplus_reference(in[0]); }, {x});
  INFO(r.report);
  CHECK(r.ok);
  // The backward is sigmoid(x): at x = 0 the slope is exactly 1/2.
  Tensor zero = tensor({0.0}, kFloat64).requires_grad_();
  softplus_reference(zero).backward();
  CHECK(zero.grad().item() == 0.5);
}

TEST_CASE("exercise check: mul as a custom op, gradcheck with and without broadcasting",
          "[lesson02][gradcheck]") {
  Generator gen(12);
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{3, 1}, {1, 4}}, {{}, {2, 3}}};
  for (const auto& [sa, sb] : pairs) {
    INFO(to_string(sa) << " * " << to_string(sb));
    Tensor a = randn(sa, gen, kFloat64).requires_grad_();
    Tensor b = randn(sb, gen, kFloat64).requires_grad_();
    check_close(mul_reference(a, b).data(), a.data() * b.data(), 0.0);
    GradcheckResult r = gradcheck(
        [](const std::vector<Tensor>& in) { return mul_reference(in[0], in[1]); }, {a, b});
    INFO(r.report);
    CHECK(r.ok);
  }
}
