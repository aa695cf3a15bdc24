// End to end: the optimizers minimise losses built with Tensors.
#include "nn/linear.h"
#include "nn/loss.h"
#include "optim_support.h"

using namespace attend;
using namespace attend::testing;

namespace {

// Minimises sum((w - target)^2) from w = 0 for `steps` steps and returns the final loss.
// Its initial value is 1 + 4 + 9 + 0.25 = 14.25.
double minimise_quadratic(optim::Optimizer& optimizer, Tensor& w, int steps) {
  Tensor target = tensor({1, -2, 3, 0.5}, w.dtype());
  auto loss_fn = [&] {
    Tensor diff = w - target;
    return sum(diff * diff);
  };
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    loss_fn().backward();
    optimizer.step();
  }
  NoGradGuard no_grad;
  return loss_fn().item();
}

}  // namespace

TEST_CASE("SGD minimises a quadratic", "[optim]") {
  const DType dtype = GENERATE(kFloat64, kFloat32);
  INFO("dtype " << dtype_name(dtype));
  // Plain SGD with lr 0.1 multiplies w - target by 1 - 2 * 0.1 = 0.8 per step:
  // after 100 steps the loss is 14.25 * 0.8^200, about 5e-19 (float32 stops at rounding).
  Tensor w = zeros({4}, dtype).requires_grad_();
  optim::SGD sgd({w}, {.lr = 0.1});
  CHECK(minimise_quadratic(sgd, w, 100) < 1e-10);
  // With momentum 0.9 and lr 0.02 it also converges (no faster on this easy problem).
  Tensor v = zeros({4}, dtype).requires_grad_();
  optim::SGD momentum({v}, {.lr = 0.02, .momentum = 0.9, .nesterov = true});
  CHECK(minimise_quadratic(momentum, v, 200) < 1e-8);
}

TEST_CASE("Adam and AdamW minimise a quadratic", "[optim]") {
  const DType dtype = GENERATE(kFloat64, kFloat32);
  INFO("dtype " << dtype_name(dtype));
  Tensor w = zeros({4}, dtype).requires_grad_();
  optim::Adam adam({w}, {.lr = 0.1});
  CHECK(minimise_quadratic(adam, w, 500) < 1e-6);
  // AdamW's decay pulls w towards 0, so its minimum sits slightly off target; with
  // weight_decay 1e-4 the offset is far below the tolerance.
  Tensor v = zeros({4}, dtype).requires_grad_();
  optim::AdamW adamw({v}, {.lr = 0.1, .weight_decay = 1e-4});
  CHECK(minimise_quadratic(adamw, v, 500) < 1e-6);
}

TEST_CASE("AdamW with warmup, cosine and clipping fits a float64 linear model", "[optim]") {
  // y = x . [1, -2, 0.5] + 0.3 on 32 random points; a Linear(3, 1) in float64 recovers it.
  Generator gen(7);
  Tensor x = randn({32, 3}, gen, kFloat64);
  Tensor y = matmul(x, tensor({1, -2, 0.5}, {3, 1}, kFloat64)) + 0.3;
  nn::Linear model(3, 1, true, gen);
  model.to(kFloat64);
  optim::AdamW adamw(model.parameters(), {.lr = 0.05, .weight_decay = 1e-4});
  optim::Schedule schedule = optim::LinearWarmup(0.05, 20, optim::CosineAnnealing(0.05, 380));
  double first_loss = 0, loss_value = 0;
  for (int step = 0; step < 400; ++step) {
    optim::apply_schedule(adamw, schedule);
    adamw.zero_grad();
    Tensor loss = nn::mse_loss(model(x), y);
    loss.backward();
    optim::clip_grad_norm(model.parameters(), 1.0);
    adamw.step();
    loss_value = loss.item();
    if (step == 0) first_loss = loss_value;
  }
  INFO("loss " << first_loss << " -> " << loss_value);
  CHECK(first_loss > 1);
  CHECK(loss_value < 1e-5);
  check_close(model.weight.data(), f64({1, -2, 0.5}, {1, 3}), 1e-2);
  CHECK(model.weight.dtype() == kFloat64);
}
