// Section 3 of the program: noise in a linear model's inputs shrinks its weights, learned by
// SGD and compared with the closed form (noisy_linear.cpp computes them).
#include <algorithm>
#include <cmath>

#include "program.h"

namespace attend::lesson04 {
namespace {

// Samples of the Monte-Carlo check of the expected loss.
constexpr Index kMonteCarloSamples = 200000;

}  // namespace

void section_noisy_linear(app::Transcript& t, const Options& o) {
  t.heading("3. Noisy inputs shrink the weights: y = w . (x + eps)");
  Generator gen(o.seed);
  NoisyLinearProblem problem =
      make_noisy_linear_problem(o.features, o.lowest_variance, o.highest_variance, gen);
  std::vector<double> optimum = optimal_noisy_weights(problem);
  NoisyTraining training =
      train_noisy_linear(problem, o.linear_steps, o.linear_batch, o.linear_lr, gen);
  t.say(
      "{} features x_i ~ N(0, 1), y = w_true . x with w_true_i = +-1; the model sees\n"
      "x_i + eps_i, eps_i ~ N(0, s_i^2), s_i^2 from {} to {}. SGD from w = 0: {} steps of\n"
      "{} fresh samples (fresh noise every step), lr {}.\n\n",
      o.features, o.lowest_variance, o.highest_variance, o.linear_steps, o.linear_batch,
      o.linear_lr);
  t.say("  {:>3} {:>8} {:>7} {:>16} {:>10}\n", "i", "s_i^2", "w_true", "w* = w/(1+s^2)", "learned");
  std::vector<double> magnitude, inverse_variance, shrink;
  double largest_gap = 0;
  for (std::size_t i = 0; i < optimum.size(); ++i) {
    t.say("  {:>3} {:>8.3f} {:>7} {:>16.4f} {:>10.4f}\n", i, problem.noise_variances[i],
          problem.true_weights[i], optimum[i], training.weights[i]);
    magnitude.push_back(std::abs(training.weights[i]));
    inverse_variance.push_back(1 / problem.noise_variances[i]);
    shrink.push_back(1 / (1 + problem.noise_variances[i]));
    largest_gap = std::max(largest_gap, std::abs(training.weights[i] - optimum[i]));
  }
  t.say("\ncorrelation of the learned w_i with the closed-form w*_i:    {:.4f}\n",
        pearson_correlation(training.weights, optimum));
  t.say("largest |learned - w*|:                                      {:.4f}\n", largest_gap);
  t.say("correlation of |w_i| with 1/s_i^2 (Pearson):                 {:.4f}\n",
        pearson_correlation(magnitude, inverse_variance));
  t.say("rank correlation of |w_i| with 1/s_i^2 (Spearman):           {:.4f}\n",
        spearman_correlation(magnitude, inverse_variance));
  t.say("correlation of |w_i| with the shrink factor 1/(1 + s_i^2):   {:.4f}\n",
        pearson_correlation(magnitude, shrink));

  ExpectedLoss expected = expected_noisy_loss(problem, training.weights);
  Generator check_gen(o.seed + 2);
  NoisyBatch big = draw_noisy_batch(problem, kMonteCarloSamples, check_gen, kFloat64);
  Tensor w(NDArray::from_vector(training.weights, Shape{o.features}).to(kFloat64));
  double measured = 0;
  {
    NoGradGuard no_graph;
    measured = noisy_linear_loss(w, big).item();
  }
  t.say(
      "\nThe loss of the learned w: |w - w_true|^2 = {:.4f} plus sum_i w_i^2 s_i^2 = {:.4f}\n"
      "gives {:.4f}; measured on {} fresh noisy samples: {:.4f}. At w = w_true the\n"
      "ridge term alone would be sum_i s_i^2 = {:.4f}; at w* the total is {:.4f}.\n",
      expected.clean, expected.ridge, expected.total(), kMonteCarloSamples, measured,
      expected_noisy_loss(problem, problem.true_weights).total(),
      expected_noisy_loss(problem, optimum).total());

  viz::Series learned{"|learned w_i|"}, closed{"|w*_i| = 1 / (1 + s_i^2)"};
  for (std::size_t i = 0; i < optimum.size(); ++i) {
    learned.add(problem.noise_variances[i], magnitude[i]);
    closed.add(problem.noise_variances[i], std::abs(optimum[i]));
  }
  const bool drawn = viz::plot_curves(o.out + "/noisy_linear.png", {closed, learned},
                                      {.title = "noisier features get smaller weights",
                                       .x_label = "s_i^2 (noise variance)",
                                       .y_label = "|w_i|",
                                       .y2_label = {}});
  t.say_plot_files(drawn, "noisy_linear");
}

}  // namespace attend::lesson04
