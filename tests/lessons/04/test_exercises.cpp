// Exercise checks for docs/04_attention_pooling.md. Each test passes with the reference
// solution in lessons/04_attention_pooling/exercises.cpp (or the lesson's own code) and checks
// what any correct solution must do: put your own code in its place and run
// `ctest --test-dir build -L lesson04`. Gradchecks use gradcheck's default tolerances (eps
// 1e-6, atol 1e-5, rtol 1e-3).
#include <cmath>

#include "lessons/04_attention_pooling/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson04;
using Catch::Matchers::WithinAbs;

TEST_CASE("exercise check: the Laplace kernel, weights by hand", "[lesson04]") {
  // Query 0 against keys 0, 1, 3 with w = 2: scores -|0|, -|2|, -|6|.
  Tensor distance = tensor({0, -1, -3}, {1, 3}, kFloat64);
  check_close(laplace_scores(distance, full({}, 2.0, kFloat64)).data(), f64({0, -2, -6}, {1, 3}));
  check_close(kernel_scores(distance, full({}, 2.0, kFloat64), Kernel::kLaplace).data(),
              f64({0, -2, -6}, {1, 3}));
  KernelRegression fit =
      nadaraya_watson(tensor({0}, kFloat64), tensor({0, 1, 3}, kFloat64),
                      tensor({1, 2, 4}, kFloat64), full({}, 2.0, kFloat64), {}, Kernel::kLaplace);
  const double z = 1 + std::exp(-2.0) + std::exp(-6.0);
  check_close(fit.weights.data(), f64({1 / z, std::exp(-2.0) / z, std::exp(-6.0) / z}, {1, 3}),
              1e-12);
  // Its tails are heavier than the Gaussian's: at distance 3 with w = 1, e^-3 against e^-4.5.
  CHECK(laplace_scores(tensor({3}, kFloat64), full({}, 1.0, kFloat64)).item() >
        kernel_scores(tensor({3}, kFloat64), full({}, 1.0, kFloat64), Kernel::kGaussian).item());
  CHECK(parse_kernel("laplace") == Kernel::kLaplace);
}

TEST_CASE("exercise check: the Laplace kernel, gradcheck and learning its width",
          "[lesson04][gradcheck]") {
  Generator gen(21);
  RegressionData data = make_regression_data(8, 0.5, gen, kFloat64);
  Tensor width = full({}, 1.3, kFloat64).requires_grad_();
  Tensor queries = tensor({0.3, 1.7, 4.2}, kFloat64).requires_grad_();
  Tensor values = Tensor(data.y_train.data().clone(), true);
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        return nadaraya_watson(in[0], data.x_train, in[1], in[2], {}, Kernel::kLaplace).predictions;
      },
      {queries, values, width});
  INFO(r.report);
  CHECK(r.ok);
  GradcheckResult loo = gradcheck(
      [&](const std::vector<Tensor>& in) { return width_loss(data, in[0], Kernel::kLaplace); },
      {width});
  INFO(loo.report);
  CHECK(loo.ok);
  // On the lesson's data the learned Laplace width also beats the fixed w = 1.
  Generator lesson_gen(0);
  RegressionData lesson = make_regression_data(50, 0.5, lesson_gen);
  WidthTraining training = learn_width(lesson, 1.0, 500, 5.0, Kernel::kLaplace);
  CHECK(std::abs(training.final_gradient) < 1e-6);
  CHECK(training.final_loss < width_loss(lesson, full({}, 1.0), Kernel::kLaplace).item());
}

TEST_CASE("exercise check: without leave-one-out the width keeps growing", "[lesson04]") {
  Generator gen(0);
  RegressionData data = make_regression_data(50, 0.5, gen);
  WidthTraining held_out = learn_width(data, 1.0, 500, 5.0);
  WidthTraining in_sample = learn_width(data, 1.0, 500, 5.0, Kernel::kGaussian, false);
  // The in-sample loss rewards w -> infinity: its slope is still negative where it stops...
  CHECK(in_sample.final_gradient < -1e-4);
  CHECK(in_sample.width > 3 * held_out.width);
  // ... its own loss looks better, and the held-out loss of that w is worse.
  CHECK(in_sample.final_loss < held_out.final_loss);
  CHECK(width_loss(data, full({}, in_sample.width)).item() > held_out.final_loss);
  // And it keeps falling as w grows.
  const double at_10 = width_loss(data, full({}, 10.0), Kernel::kGaussian, false).item();
  const double at_40 = width_loss(data, full({}, 40.0), Kernel::kGaussian, false).item();
  CHECK(at_40 < at_10);
}

TEST_CASE("exercise check: a noisier feature, a smaller weight", "[lesson04]") {
  Generator gen(0);
  NoisyLinearProblem problem = make_noisy_linear_problem(16, 0.1, 100, gen);
  std::vector<double> optimum = optimal_noisy_weights(problem);
  CHECK_THAT(std::abs(optimum.back()), WithinAbs(1.0 / 101, 1e-12));
  // The noisiest feature has E[x~^2] = 1 + 100, so the loss curves 2 * 101 = 202 along its
  // weight; gradient descent is stable only for lr < 2 / 202. lr 0.01 is just too large:
  // the weights wander far from w*...
  NoisyTraining unstable = train_noisy_linear(problem, 3000, 256, 0.01, gen);
  CHECK(std::abs(unstable.weights.back()) > 1);
  CHECK(pearson_correlation(unstable.weights, optimum) < 0.9);
  // ... and lr 0.005 finds them.
  NoisyTraining training = train_noisy_linear(problem, 3000, 256, 0.005, gen);
  CHECK(std::abs(training.weights.back()) < 0.05);
  CHECK(std::abs(training.weights.front()) > 0.8);
  CHECK(pearson_correlation(training.weights, optimum) > 0.99);
}
