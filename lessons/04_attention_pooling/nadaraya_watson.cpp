// (a) Nadaraya-Watson kernel regression (Nadaraya 1964; Watson 1964) read as attention, in
// the setting of Dive into Deep Learning (older edition, "Attention Pooling: Nadaraya-Watson
// Kernel Regression"): the query is a test input x, the keys are the training inputs x_i,
// the values are the training targets y_i, and
//
//   f(x) = sum_i alpha(x, x_i) y_i,   alpha(x, x_i) = K(x - x_i) / sum_j K(x - x_j).
//
// With the Gaussian kernel K(u) = exp(-u^2 / 2) / sqrt(2 pi) the constant cancels and
// alpha(x, .) = softmax(-(x - x_i)^2 / 2): attention weights are a softmax of scores, the
// score here being minus half the squared distance. A width parameter w scales the
// distance, softmax(-((x - x_i) w)^2 / 2), and because everything is written with Tensors,
// backward() gives dL/dw and the width can be learned. (d2l writes the learnable form with
// w; its standard deviation is 1/|w|.)
#include <algorithm>
#include <cmath>

#include "lesson.h"

namespace attend::lesson04 {

double regression_target(double x) {
  return 2 * std::sin(x) + std::pow(x, 0.8);
}

RegressionData make_regression_data(Index train_points, double noise_std, Generator& gen,
                                    DType dtype) {
  if (train_points < 2)
    fail("make_regression_data: need at least 2 training points, got {}", train_points);
  std::vector<double> x(static_cast<std::size_t>(train_points));
  for (double& v : x) v = gen.uniform(0, kInputRange);
  std::sort(x.begin(), x.end());
  std::vector<double> y;
  for (double v : x) y.push_back(regression_target(v) + gen.normal(0, noise_std));
  std::vector<double> x_test, y_truth;
  for (Index i = 0; i < kTestPoints; ++i) {
    x_test.push_back(kTestStep * static_cast<double>(i));
    y_truth.push_back(regression_target(x_test.back()));
  }
  auto as_tensor = [dtype](const std::vector<double>& v) {
    return Tensor(NDArray::from_vector(v, Shape{static_cast<Index>(v.size())}).to(dtype));
  };
  return {as_tensor(x), as_tensor(y), as_tensor(x_test), as_tensor(y_truth)};
}

Tensor average_pooling(const Tensor& queries, const Tensor& values) {
  // Every query gets the same answer: the mean of the values.
  return broadcast_to(mean(values), queries.shape());
}

std::string kernel_name(Kernel kernel) {
  return kernel == Kernel::kGaussian ? "gaussian" : "laplace";
}

Kernel parse_kernel(const std::string& name) {
  if (name == "gaussian") return Kernel::kGaussian;
  if (name == "laplace") return Kernel::kLaplace;
  fail("unknown kernel '{}': use gaussian or laplace", name);
}

Tensor kernel_scores(const Tensor& distance, const Tensor& width, Kernel kernel) {
  // The kernel's normalising constant would cancel in the softmax, so log K(u) is the score.
  if (kernel == Kernel::kLaplace) return laplace_scores(distance, width);
  return pow(distance * width, 2) * -0.5;  // -((x - x_i) w)^2 / 2
}

KernelRegression nadaraya_watson(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                 const Tensor& width, const Tensor& mask, Kernel kernel) {
  if (queries.ndim() != 1 || keys.ndim() != 1 || values.shape() != keys.shape())
    fail("nadaraya_watson: need queries [Q], keys [n] and values [n], got {}, {} and {}",
         queries.shape(), keys.shape(), values.shape());
  if (width.numel() != 1)
    fail("nadaraya_watson: the width must be one number, got {}", width.shape());
  Tensor distance = unsqueeze(queries, 1) - unsqueeze(keys, 0);  // [Q, n]: x - x_i
  KernelRegression out;
  out.weights = nn::masked_softmax(kernel_scores(distance, width, kernel), mask);  // alpha
  out.predictions = squeeze(matmul(out.weights, unsqueeze(values, 1)), 1);  // sum_i alpha y_i
  return out;
}

Tensor leave_one_out_mask(Index n, DType dtype) {
  NDArray keep = NDArray::ones({n, n}, dtype);
  for (Index i = 0; i < n; ++i) keep.set({i, i}, 0);
  return Tensor(keep);
}

Tensor width_loss(const RegressionData& data, const Tensor& width, Kernel kernel,
                  bool leave_one_out) {
  const Index n = data.x_train.numel();
  Tensor mask = leave_one_out ? leave_one_out_mask(n, data.x_train.dtype()) : Tensor();
  KernelRegression fit =
      nadaraya_watson(data.x_train, data.x_train, data.y_train, width, mask, kernel);
  return mean(pow(fit.predictions - data.y_train, 2)) * 0.5;
}

WidthTraining learn_width(const RegressionData& data, double initial_width, int steps, double lr,
                          Kernel kernel, bool leave_one_out) {
  if (steps < 0) fail("learn_width: steps must be >= 0, got {}", steps);
  Tensor width = full({}, initial_width, data.x_train.dtype()).requires_grad_();
  WidthTraining out;
  for (int step = 0; step < steps; ++step) {
    width.zero_grad();
    Tensor loss = width_loss(data, width, kernel, leave_one_out);
    // Before backward() and the update: an inf or NaN loss must not reach the width.
    optim::check_loss_is_finite(fmt::format("learn_width (learning rate {})", lr), step + 1,
                                loss.item());
    loss.backward();
    out.losses.push_back(loss.item());
    add_(width.data(), width.grad().data(), -lr);  // w -= lr * dL/dw
  }
  // The loss and slope where training stopped.
  width.zero_grad();
  Tensor loss = width_loss(data, width, kernel, leave_one_out);
  loss.backward();
  out.width = width.item();
  out.final_loss = loss.item();
  out.final_gradient = width.grad().item();
  return out;
}

double mean_squared_error(const Tensor& a, const Tensor& b) {
  NoGradGuard no_graph;
  return mean(pow(a - b, 2)).item();
}

}  // namespace attend::lesson04
