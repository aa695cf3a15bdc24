// (c) Noise in the inputs acts as a penalty on the weights. The target is y = w_true . x,
// x ~ N(0, I), but the model only sees each feature through its own noise:
// x~_i = x_i + eps_i, eps_i ~ N(0, s_i^2), independent of x. For a linear model
// y^ = w . x~ the expected squared error splits in two, because the noise has mean 0 and is
// independent of everything else:
//
//   E[(w . (x + eps) - y)^2] = E[((w - w_true) . x)^2] + E[(w . eps)^2]
//                            = |w - w_true|^2          + sum_i w_i^2 s_i^2.
//
// The second term is ridge regression's penalty with a separate strength s_i^2 for every
// weight. Setting the gradient to zero, 2 (w_i - w_true_i) + 2 w_i s_i^2 = 0, gives
//
//   w*_i = w_true_i / (1 + s_i^2)       (in general w* = (S_x + diag(s^2))^-1 S_x w_true),
//
// so the noisier a feature, the less the model trusts it. In attention terms: a learned
// weighting turns down the inputs that carry little signal.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "lesson.h"

namespace attend::lesson04 {

NoisyLinearProblem make_noisy_linear_problem(Index features, double lowest_variance,
                                             double highest_variance, Generator& gen) {
  if (features < 2) fail("make_noisy_linear_problem: need at least 2 features, got {}", features);
  if (!(lowest_variance > 0) || !(highest_variance >= lowest_variance))
    fail("make_noisy_linear_problem: need 0 < lowest variance <= highest, got {} and {}",
         lowest_variance, highest_variance);
  NoisyLinearProblem problem;
  const double ratio = highest_variance / lowest_variance;
  for (Index i = 0; i < features; ++i) {
    // Every weight has size 1 and a random sign, so that only the noise sets its shrinkage.
    problem.true_weights.push_back(gen.bernoulli(0.5) ? 1.0 : -1.0);
    const double position = static_cast<double>(i) / static_cast<double>(features - 1);
    problem.noise_variances.push_back(lowest_variance * std::pow(ratio, position));
  }
  return problem;
}

std::vector<double> optimal_noisy_weights(const NoisyLinearProblem& problem) {
  std::vector<double> w;
  for (std::size_t i = 0; i < problem.true_weights.size(); ++i)
    w.push_back(problem.true_weights[i] / (1 + problem.noise_variances[i]));
  return w;
}

NoisyBatch draw_noisy_batch(const NoisyLinearProblem& problem, Index batch, Generator& gen,
                            DType dtype) {
  const Index d = static_cast<Index>(problem.true_weights.size());
  NDArray clean = NDArray::normal({batch, d}, gen, 0, 1, kFloat64);
  NDArray noise = NDArray::normal({batch, d}, gen, 0, 1, kFloat64);
  NDArray stddev = sqrt(NDArray::from_vector(problem.noise_variances, Shape{d}));
  NDArray w_true = NDArray::from_vector(problem.true_weights, Shape{d, 1});
  NDArray y = matmul(clean, w_true).reshape({batch});
  return {Tensor(clean.to(dtype)), Tensor((clean + noise * stddev).to(dtype)), Tensor(y.to(dtype))};
}

Tensor noisy_linear_loss(const Tensor& weights, const NoisyBatch& batch) {
  Tensor prediction = squeeze(matmul(batch.observed, unsqueeze(weights, 1)), 1);
  return mean(pow(prediction - batch.targets, 2));
}

NoisyTraining train_noisy_linear(const NoisyLinearProblem& problem, int steps, Index batch,
                                 double lr, Generator& gen) {
  if (steps < 1 || batch < 1) fail("train_noisy_linear: steps and batch must be at least 1");
  const Index d = static_cast<Index>(problem.true_weights.size());
  Tensor w = zeros({d}).requires_grad_();
  optim::SGD sgd({w}, {.lr = lr});
  NoisyTraining out;
  for (int step = 0; step < steps; ++step) {
    NoisyBatch data = draw_noisy_batch(problem, batch, gen);  // fresh x and fresh noise
    sgd.zero_grad();
    Tensor loss = noisy_linear_loss(w, data);
    // Before backward() and the step: an inf or NaN loss must not reach the weights.
    optim::check_loss_is_finite(fmt::format("train_noisy_linear (learning rate {})", lr), step + 1,
                                loss.item());
    loss.backward();
    sgd.step();
    out.losses.push_back(loss.item());
  }
  out.weights = w.data().to_vector();
  return out;
}

ExpectedLoss expected_noisy_loss(const NoisyLinearProblem& problem,
                                 const std::vector<double>& weights) {
  ExpectedLoss loss;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double error = weights[i] - problem.true_weights[i];
    loss.clean += error * error;
    loss.ridge += weights[i] * weights[i] * problem.noise_variances[i];
  }
  return loss;
}

double pearson_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2)
    fail("pearson_correlation: need two lists of the same length >= 2, got {} and {}", a.size(),
         b.size());
  const double n = static_cast<double>(a.size());
  const double mean_a = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mean_b = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - mean_a) * (b[i] - mean_b);
    aa += (a[i] - mean_a) * (a[i] - mean_a);
    bb += (b[i] - mean_b) * (b[i] - mean_b);
  }
  if (aa == 0 || bb == 0) fail("pearson_correlation: a list is constant");
  return ab / std::sqrt(aa * bb);
}

namespace {
// Ranks 1..n; tied values share the mean of their ranks.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return v[i] < v[j]; });
  std::vector<double> rank(v.size());
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    while (last + 1 < order.size() && v[order[last + 1]] == v[order[first]]) ++last;
    for (std::size_t k = first; k <= last; ++k)
      rank[order[k]] = 1 + 0.5 * static_cast<double>(first + last);
    first = last + 1;
  }
  return rank;
}
}  // namespace

double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  return pearson_correlation(ranks(a), ranks(b));
}

}  // namespace attend::lesson04
