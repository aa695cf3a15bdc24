// The doubly stochastic attention penalty (nn/loss.h; Xu et al. 2015, section 4.2.1):
// float64 gradcheck, masking, values by hand and the readable errors.
#include "attend.h"
#include "support.h"

using namespace attend;
using attend::testing::error_message;

// Gradcheck: |analytic - numeric| <= 1e-6 + 1e-4 |numeric|, central differences of step
// 1e-6 in float64.
TEST_CASE("the doubly stochastic regulariser passes gradcheck, padded steps masked",
          "[gradcheck]") {
  Generator gen(5);
  Tensor alphas = softmax(randn({2, 3, 4}, gen, kFloat64), -1).detach().requires_grad_();
  Tensor mask(NDArray::from_list({1, 1, 1, 1, 1, 0}, {2, 3}, kFloat64));
  GradcheckResult result = gradcheck(
      [&](const std::vector<Tensor>& in) { return nn::doubly_stochastic_penalty(in[0], mask); },
      {alphas}, {.eps = 1e-6, .atol = 1e-6, .rtol = 1e-4});
  INFO(result.report);
  CHECK(result.ok);
  // The masked step (caption 2, step 3) gets no gradient at all.
  alphas.zero_grad();
  nn::doubly_stochastic_penalty(alphas, mask).backward();
  for (Index i = 0; i < 4; ++i) CHECK(alphas.grad().data().at({1, 2, i}) == 0.0);
}

TEST_CASE("the regulariser is zero exactly when every region's attention sums to 1 over time") {
  // T = L = 4. A permutation (each step looks at a different region) and the uniform map
  // both give sum_t alpha_ti = 1 for every i.
  Tensor permutation(
      NDArray::from_list({0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0}, {1, 4, 4}, kFloat64));
  Tensor uniform(NDArray::full({1, 4, 4}, 0.25, kFloat64));
  Tensor all_steps(NDArray::ones({1, 4}, kFloat64));
  CHECK(nn::doubly_stochastic_penalty(permutation, all_steps).item() == 0.0);
  CHECK(nn::doubly_stochastic_penalty(uniform, all_steps).item() == 0.0);
  // Staring at region 0 the whole time: (1 - 4)^2 + 3 * (1 - 0)^2 = 12.
  Tensor stare(
      NDArray::from_list({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, {1, 4, 4}, kFloat64));
  CHECK(nn::doubly_stochastic_penalty(stare, all_steps).item() == 12.0);
  // A fifth, padded step changes nothing when masked.
  Tensor padded = concat({permutation, Tensor(NDArray::full({1, 1, 4}, 0.25, kFloat64))}, 1);
  Tensor mask(NDArray::from_list({1, 1, 1, 1, 0}, {1, 5}, kFloat64));
  CHECK(nn::doubly_stochastic_penalty(padded, mask).item() == 0.0);
}

TEST_CASE("the regulariser without a mask counts every step") {
  Generator gen(6);
  Tensor alphas = softmax(randn({2, 3, 4}, gen, kFloat64), -1);
  Tensor all_steps(NDArray::ones({2, 3}, kFloat64));
  CHECK(nn::doubly_stochastic_penalty(alphas).item() ==
        Approx(nn::doubly_stochastic_penalty(alphas, all_steps).item()));
}

TEST_CASE("the regulariser's bad shapes give one readable error") {
  Tensor alphas(NDArray::full({2, 3, 4}, 0.25, kFloat64));
  CHECK_THAT(error_message([&] {
               nn::doubly_stochastic_penalty(Tensor(NDArray::ones({3, 4})));
             }),
             Catch::Contains("alphas must be [B, T, L]"));
  CHECK_THAT(error_message([&] {
               nn::doubly_stochastic_penalty(alphas, Tensor(NDArray::ones({2, 4}, kFloat64)));
             }),
             Catch::Contains("need a mask [2, 3]"));
}
