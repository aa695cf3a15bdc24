// optim::fit, the library's training loop.
#include "optim_support.h"

using namespace attend;
using namespace attend::testing;

TEST_CASE("fit runs zero_grad, backward, step in order and reports every step", "[optim]") {
  // sum((w - 3)^2) with SGD lr 0.25: w - 3 halves every step, from -3.
  Tensor w = zeros({1}, kFloat64).requires_grad_();
  optim::SGD sgd({w}, {.lr = 0.25});
  std::vector<double> losses;
  optim::FitResult r = optim::fit(
      sgd, {.steps = 4},
      [&](Index) {
        Tensor d = w - 3.0;
        return sum(d * d);
      },
      [&](Index step, double loss) {
        CHECK(step == static_cast<Index>(losses.size()) + 1);
        losses.push_back(loss);
      });
  // Losses before each step: 9, 9/4, 9/16, 9/64 (gradients do not pile up: zero_grad works).
  REQUIRE(losses.size() == 4);
  CHECK(losses[0] == Approx(9.0));
  CHECK(losses[1] == Approx(2.25));
  CHECK(losses[2] == Approx(0.5625));
  CHECK(losses[3] == Approx(0.140625));
  CHECK(r.steps == 4);
  CHECK(r.last_loss == Approx(0.140625));
  CHECK(w.data().at({0}) == Approx(3.0 - 3.0 / 16));
}

TEST_CASE("fit clips the gradient's global norm before each step", "[optim]") {
  // Gradient of sum(w * 10) is 10: clipped to 0.5, SGD lr 1 moves w by 0.5 per step.
  Tensor w = zeros({1}, kFloat64).requires_grad_();
  optim::SGD sgd({w}, {.lr = 1.0});
  optim::fit(sgd, {.steps = 2, .clip_norm = 0.5}, [&](Index) { return sum(w * 10.0); });
  CHECK(w.data().at({0}) == Approx(-1.0).margin(1e-5));
}

TEST_CASE("fit stops at the first non-finite loss, naming the step", "[optim]") {
  // After two SGD steps on sum(w^2), w = 0.64: log(w - 1) at step 3 is NaN.
  Tensor w = ones({1}, kFloat64).requires_grad_();
  optim::SGD sgd({w}, {.lr = 0.1});
  auto nan_at_three = [&](Index step) { return step == 3 ? sum(log(w - 1.0)) : sum(w * w); };
  CHECK_THROWS_WITH(optim::fit(sgd, {.steps = 5}, nan_at_three),
                    Catch::Contains("fit: the loss of step 3 is NaN"));
  CHECK(w.data().at({0}) == Approx(0.64));  // the NaN step changed nothing
}

TEST_CASE("fit wants one number as the loss", "[optim]") {
  Tensor v = ones({2}, kFloat64).requires_grad_();
  optim::SGD sgd({v}, {.lr = 0.1});
  CHECK_THROWS_WITH(
      optim::fit(sgd, {.steps = 1}, [&](Index) { return v * 2.0; }),
      Catch::Contains("fit: the loss of step 1 has shape") && Catch::Contains("not one number"));
}

TEST_CASE("check_loss_is_finite names the loop, the step and the loss, with a hint", "[optim]") {
  CHECK_NOTHROW(optim::check_loss_is_finite("train", 1, 0.25));
  CHECK_THROWS_WITH(optim::check_loss_is_finite("train_decoder", 7, INFINITY),
                    Catch::Contains("train_decoder: the loss of step 7 is inf") &&
                        Catch::Contains("DetectAnomalyGuard"));
  CHECK_THROWS_WITH(optim::check_loss_is_finite("train", 2, NAN),
                    Catch::Contains("train: the loss of step 2 is NaN"));
}
