// SGD against updates computed by hand. Every case starts from p = [1, -2] and feeds the
// gradients g1 = [0.5, -1], g2 = [1, 2], g3 = [0, 0] in turn.
#include <cmath>

#include "optim_support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// Runs SGD with `options` over the gradient sequence and checks p after each step.
void check_sgd_steps(const optim::SGDOptions& options,
                     std::initializer_list<std::initializer_list<double>> expected) {
  const DType dtype = GENERATE(kFloat64, kFloat32);
  INFO("dtype " << dtype_name(dtype));
  const std::initializer_list<double> grads[] = {{0.5, -1}, {1, 2}, {0, 0}};
  Tensor p = parameter({1, -2}, dtype);
  optim::SGD sgd({p}, options);
  std::size_t step = 0;
  for (std::initializer_list<double> after : expected) {
    INFO("step " << step + 1);
    set_grad(p, grads[step++]);
    sgd.step();
    CHECK(p.dtype() == dtype);
    check_close(p.data(), f64(after, {2}), tolerance_for(dtype));
  }
  CHECK(sgd.steps_taken() == static_cast<std::int64_t>(expected.size()));
}

}  // namespace

TEST_CASE("SGD plain: p -= lr * g", "[optim]") {
  // lr 0.1: p1 = [1 - 0.05, -2 + 0.1] = [0.95, -1.9]
  //         p2 = [0.95 - 0.1, -1.9 - 0.2] = [0.85, -2.1];  g3 = 0 leaves p2
  check_sgd_steps({.lr = 0.1}, {{0.95, -1.9}, {0.85, -2.1}, {0.85, -2.1}});
}

TEST_CASE("SGD momentum: buf = g on the first step, then momentum * buf + g", "[optim]") {
  // lr 0.1, momentum 0.9
  // step 1: buf = g1 = [0.5, -1];                          p1 = [0.95, -1.9]
  // step 2: buf = 0.9 [0.5, -1] + [1, 2] = [1.45, 1.1];    p2 = [0.95 - 0.145, -1.9 - 0.11]
  // step 3: buf = 0.9 [1.45, 1.1] + 0 = [1.305, 0.99];     p3 = [0.805 - 0.1305, -2.01 - 0.099]
  check_sgd_steps({.lr = 0.1, .momentum = 0.9}, {{0.95, -1.9}, {0.805, -2.01}, {0.6745, -2.109}});
}

TEST_CASE("SGD dampening scales the new gradient, but not on the first step", "[optim]") {
  // lr 0.1, momentum 0.9, dampening 0.5
  // step 1: buf = g1 = [0.5, -1] (undamped);                  p1 = [0.95, -1.9]
  // step 2: buf = 0.9 [0.5, -1] + 0.5 [1, 2] = [0.95, 0.1];   p2 = [0.95 - 0.095, -1.9 - 0.01]
  // step 3: buf = 0.9 [0.95, 0.1] = [0.855, 0.09];            p3 = [0.855 - 0.0855, -1.91 - 0.009]
  check_sgd_steps({.lr = 0.1, .momentum = 0.9, .dampening = 0.5},
                  {{0.95, -1.9}, {0.855, -1.91}, {0.7695, -1.919}});
}

TEST_CASE("SGD nesterov: the step is g + momentum * buf", "[optim]") {
  // lr 0.1, momentum 0.9, nesterov
  // step 1: buf = [0.5, -1];   d = g1 + 0.9 buf = [0.95, -1.9];   p1 = [1 - 0.095, -2 + 0.19]
  // step 2: buf = [1.45, 1.1]; d = [1 + 1.305, 2 + 0.99] = [2.305, 2.99]
  //         p2 = [0.905 - 0.2305, -1.81 - 0.299] = [0.6745, -2.109]
  // step 3: buf = [1.305, 0.99]; d = 0 + 0.9 buf = [1.1745, 0.891]
  //         p3 = [0.6745 - 0.11745, -2.109 - 0.0891] = [0.55705, -2.1981]
  check_sgd_steps({.lr = 0.1, .momentum = 0.9, .nesterov = true},
                  {{0.905, -1.81}, {0.6745, -2.109}, {0.55705, -2.1981}});
}

TEST_CASE("SGD weight decay adds wd * p to the gradient", "[optim]") {
  // lr 0.1, weight_decay 0.1
  // step 1: g = [0.5 + 0.1, -1 - 0.2] = [0.6, -1.2];          p1 = [0.94, -1.88]
  // step 2: g = [1 + 0.094, 2 - 0.188] = [1.094, 1.812];      p2 = [0.8306, -2.0612]
  // step 3: g = [0.08306, -0.20612];                          p3 = [0.822294, -2.040588]
  check_sgd_steps({.lr = 0.1, .weight_decay = 0.1},
                  {{0.94, -1.88}, {0.8306, -2.0612}, {0.822294, -2.040588}});
}

TEST_CASE("SGD weight decay goes into the momentum buffer", "[optim]") {
  // lr 0.1, momentum 0.9, weight_decay 0.1
  // step 1: g = [0.6, -1.2] = buf;                               p1 = [0.94, -1.88]
  // step 2: g = [1.094, 1.812]; buf = [0.54 + 1.094, -1.08 + 1.812] = [1.634, 0.732]
  //         p2 = [0.94 - 0.1634, -1.88 - 0.0732] = [0.7766, -1.9532]
  Tensor p = parameter({1, -2}, kFloat64);
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1});
  set_grad(p, {0.5, -1});
  sgd.step();
  set_grad(p, {1, 2});
  sgd.step();
  check_close(p.data(), f64({0.7766, -1.9532}, {2}));
  optim::StateDict state = sgd.state();
  REQUIRE(state.size() == 1);
  CHECK(state[0].first == "0.momentum_buffer");
  check_close(state[0].second, f64({1.634, 0.732}, {2}));
}

TEST_CASE("SGD uses the learning rate of each step", "[optim]") {
  // lr 0.1 then 0.01: p1 = 1 - 0.1 * 0.5 = 0.95, p2 = 0.95 - 0.01 * 1 = 0.94
  Tensor p = parameter({1}, kFloat64);
  optim::SGD sgd({p}, {.lr = 0.1});
  set_grad(p, {0.5});
  sgd.step();
  sgd.set_learning_rate(0.01);
  CHECK(sgd.learning_rate() == 0.01);
  set_grad(p, {1});
  sgd.step();
  CHECK_THAT(p.item(), Catch::Matchers::WithinAbs(0.94, 1e-15));
}

TEST_CASE("SGD skips parameters without a gradient and makes no state for them", "[optim]") {
  Tensor a = parameter({1, 2}, kFloat64), b = parameter({3}, kFloat64);
  optim::SGD sgd({a, b}, {.lr = 0.5, .momentum = 0.9});
  CHECK(sgd.state().empty());  // buffers are created lazily
  set_grad(b, {2});
  sgd.step();
  check_close(a.data(), f64({1, 2}, {2}));
  check_close(b.data(), f64({2}, {1}));  // 3 - 0.5 * 2
  optim::StateDict state = sgd.state();
  REQUIRE(state.size() == 1);
  CHECK(state[0].first == "1.momentum_buffer");
}

TEST_CASE("optimizer steps update in place and record no graph", "[optim]") {
  Tensor p = parameter({1, -2}, kFloat32);
  NDArray before = p.data();
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.5});
  set_grad(p, {0.5, -1});
  sgd.step();
  CHECK(p.data().shares_memory_with(before));  // the same memory, changed in place
  check_close(before, f64({0.95, -1.9}, {2}), 1e-7);
  CHECK(p.is_leaf());
  CHECK(p.op().empty());
  CHECK(p.requires_grad());
  CHECK(p.grad().defined());  // step() leaves the gradient; zero_grad() forgets it
  sgd.zero_grad();
  CHECK_FALSE(p.grad().defined());
}

TEST_CASE("SGD option errors", "[optim]") {
  Tensor p = parameter({1}, kFloat64);
  CHECK_THAT(error_message([&] { optim::SGD({p}, {.lr = 0.1, .nesterov = true}); }),
             Contains("SGD: nesterov momentum needs momentum > 0 and dampening == 0, got "
                      "momentum 0 and dampening 0"));
  CHECK_THAT(error_message([&] {
               optim::SGD({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true});
             }),
             Contains("got momentum 0.9 and dampening 0.1"));
  CHECK_THAT(error_message([&] { optim::SGD({p}, {.lr = -1}); }),
             Contains("optimizer: learning rate must be finite and >= 0, got -1"));
  CHECK_THAT(error_message([&] { optim::SGD({p}, {.momentum = -0.5}); }),
             Contains("SGD: momentum must be finite and >= 0, got -0.5"));
  CHECK_THAT(error_message([&] { optim::SGD({p}, {.weight_decay = -1}); }),
             Contains("SGD: weight_decay must be finite and >= 0, got -1"));
  CHECK_THAT(error_message([&] { optim::SGD({}, {}); }),
             Contains("optimizer: no parameters to optimise"));
  Tensor constant = tensor({1.0});
  CHECK_THAT(error_message([&] {
               optim::SGD({p, constant});
             }),
             Contains("optimizer: parameter 1 is undefined or does not require grad"));
  CHECK_THAT(error_message([&] {
               optim::SGD({p, p});
             }),
             Contains("optimizer: parameter 1 is the same tensor as parameter 0"));
  optim::SGD sgd({p}, {.lr = 0.1});
  CHECK_THAT(error_message([&] { sgd.set_learning_rate(std::nan("")); }),
             Contains("learning rate must be finite and >= 0, got nan"));
  CHECK(sgd.learning_rate() == 0.1);
}

TEST_CASE("SGD step errors: a gradient or buffer that no longer fits the parameter", "[optim]") {
  Tensor ok = parameter({5}, kFloat64), p = parameter({1, 2}, kFloat64);
  optim::SGD sgd({ok, p}, {.lr = 0.1, .momentum = 0.9});
  // A gradient written by hand in the wrong dtype (backward() itself never does this).
  set_grad(ok, {1});
  p.node()->grad = NDArray::from_list({1, 1}, kFloat32);
  CHECK_THAT(error_message([&] { sgd.step(); }),
             Contains("SGD.step: parameter 1 is [2] float64 but its gradient is [2] float32"));
  CHECK(ok.item() == 5);  // everything is checked before anything is updated
  CHECK(sgd.state().empty());
  CHECK(sgd.steps_taken() == 0);
  set_grad(p, {1, 1});
  sgd.step();
  // The model is converted after the momentum buffer was made.
  p.data() = p.data().to(kFloat32);
  set_grad(p, {1, 1});
  const double before = ok.item();
  CHECK_THAT(error_message([&] { sgd.step(); }),
             Contains("SGD.step: parameter 1 is now [2] float32 but its momentum_buffer is [2] "
                      "float64"));
  CHECK(ok.item() == before);
}
