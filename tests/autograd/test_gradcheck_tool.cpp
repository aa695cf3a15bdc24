// gradcheck itself must be able to fail: a wrong backward has to be reported with the input,
// the element and both values.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {
// sin with a deliberately wrong derivative: sin x where it should be cos x.
Tensor wrong_sin(const Tensor& x) {
  NDArray xv = x.data();
  return make_op("wrong_sin", sin(xv), {x},
                 [xv](const NDArray& g) -> Grads { return {g * sin(xv)}; });
}
}  // namespace

TEST_CASE("gradcheck passes a correct op and fails a wrong one", "[autograd][gradcheck]") {
  Generator gen(1);
  Tensor x = randn({2, 3}, gen, kFloat64).requires_grad_();
  auto good = gradcheck([](const std::vector<Tensor>& in) { return sin(in[0]); }, {x});
  INFO(good.report);
  CHECK(good.ok);
  CHECK(good.elements_checked == 6);
  CHECK(good.max_abs_error < 1e-8);
  CHECK(good.ops == std::vector<std::string>{"sin"});

  auto bad = gradcheck([](const std::vector<Tensor>& in) { return wrong_sin(in[0]); }, {x});
  CHECK_FALSE(bad.ok);
  CHECK_FALSE(static_cast<bool>(bad));
  CHECK_THAT(bad.report, Contains("gradcheck FAILED"));
  CHECK_THAT(bad.report, Contains("input 0 (shape [2,3]) element [0,0]: analytic"));
  CHECK_THAT(bad.report, Contains("numeric"));
  CHECK(bad.max_abs_error > 1e-3);
}

TEST_CASE("gradcheck checks several inputs and skips constants", "[autograd][gradcheck]") {
  Generator gen(2);
  Tensor a = randn({3}, gen, kFloat64).requires_grad_();
  Tensor b = randn({3}, gen, kFloat64);  // a constant
  Tensor c = randn({3}, gen, kFloat64).requires_grad_();
  auto r =
      gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[1] + in[2]; }, {a, b, c});
  INFO(r.report);
  CHECK(r.ok);
  CHECK(r.elements_checked == 6);
}

TEST_CASE("gradcheck samples elements of big inputs", "[autograd][gradcheck]") {
  Generator gen(3);
  Tensor w = randn({50, 40}, gen, kFloat64).requires_grad_();
  auto r = gradcheck([](const std::vector<Tensor>& in) { return tanh(in[0]); }, {w},
                     {.max_elements_per_input = 25});
  CHECK(r.ok);
  CHECK(r.elements_checked == 25);
}

TEST_CASE("gradcheck refuses float32 and non-deterministic functions", "[autograd][gradcheck]") {
  Generator gen(4);
  Tensor x32 = randn({2}, gen).requires_grad_();
  CHECK_THAT(error_message([&] {
               gradcheck([](const std::vector<Tensor>& in) { return in[0] * 2.0; }, {x32});
             }),
             Contains("gradcheck: input 0 is float32"));
  Tensor x = randn({2}, gen, kFloat64).requires_grad_();
  Generator noise(5);
  CHECK_THAT(
      error_message([&] {
        gradcheck(
            [&](const std::vector<Tensor>& in) { return in[0] * randn({2}, noise, kFloat64); },
            {x});
      }),
      Contains("not deterministic"));
  Tensor constant = randn({2}, gen, kFloat64);
  CHECK_THAT(error_message([&] {
               gradcheck([](const std::vector<Tensor>& in) { return in[0] * 2.0; }, {constant});
             }),
             Contains("no input has requires_grad set"));
}
