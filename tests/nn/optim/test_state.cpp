// Optimizer state: state() -> a fresh optimizer -> load_state() must continue exactly where
// the first one was; and every malformed StateDict gets an error naming the entry.
#include <functional>
#include <memory>

#include "optim_support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

// Three parameters of shapes [2], [2, 2] and [3]; the middle one gets no gradient in the
// first step, so its state is younger than the others'.
std::vector<Tensor> make_parameters(DType dtype) {
  return {parameter({1, -2}, dtype), tensor({0.5, 1, -1, 2}, {2, 2}, dtype).requires_grad_(),
          parameter({3, 0, -3}, dtype)};
}

void set_grads(const std::vector<Tensor>& params, int step) {
  const double s = step + 1;
  set_grad(params[0], {0.5 * s, -1});
  if (step > 0) set_grad(params[1], {1, -s, 0.25, 2});
  set_grad(params[2], {-s, 0.5, s * s});
}

std::vector<double> values(const std::vector<Tensor>& params) {
  std::vector<double> out;
  for (const Tensor& p : params)
    for (double v : p.data().to_vector()) out.push_back(v);
  return out;
}

void check_round_trip(const MakeOptimizer& make) {
  const DType dtype = GENERATE(kFloat64, kFloat32);
  INFO("dtype " << dtype_name(dtype));
  // Run the original for two steps and save its state.
  std::vector<Tensor> original = make_parameters(dtype);
  auto first = make(original);
  for (int step = 0; step < 2; ++step) {
    set_grads(original, step);
    first->step();
  }
  const optim::StateDict saved = first->state();
  const std::int64_t steps = first->steps_taken();
  std::vector<std::vector<double>> saved_values;
  for (const auto& entry : saved) saved_values.push_back(entry.second.to_vector());
  CHECK(steps == 2);

  // A fresh model with the same values and a fresh optimizer that loads the state...
  std::vector<Tensor> resumed = make_parameters(dtype);
  for (std::size_t i = 0; i < resumed.size(); ++i) resumed[i].data() = original[i].data().clone();
  auto second = make(resumed);
  second->load_state(saved, steps);
  CHECK(second->steps_taken() == 2);
  // ...and one that does not, to show that the state matters.
  std::vector<Tensor> restarted = make_parameters(dtype);
  for (std::size_t i = 0; i < restarted.size(); ++i)
    restarted[i].data() = original[i].data().clone();
  auto third = make(restarted);

  // The next two updates are identical, bit for bit.
  for (int step = 2; step < 4; ++step) {
    set_grads(original, step);
    set_grads(resumed, step);
    set_grads(restarted, step);
    first->step();
    second->step();
    third->step();
    CHECK(values(resumed) == values(original));
  }
  CHECK(values(restarted) != values(original));
  // state() and load_state() copy the arrays: the StateDict is untouched by later steps.
  for (std::size_t i = 0; i < saved.size(); ++i) {
    INFO(saved[i].first);
    CHECK(saved[i].second.to_vector() == saved_values[i]);
  }
  const optim::StateDict a = first->state(), b = second->state();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(a[i].second.to_vector() == b[i].second.to_vector());
  }
}

}  // namespace

TEST_CASE("state round trip: SGD with nesterov momentum", "[optim]") {
  check_round_trip([](std::vector<Tensor> p) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(
        std::move(p),
        optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true, .weight_decay = 0.01});
  });
}

TEST_CASE("state round trip: Adam", "[optim]") {
  check_round_trip([](std::vector<Tensor> p) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::Adam>(std::move(p),
                                         optim::AdamOptions{.lr = 0.05, .weight_decay = 0.1});
  });
}

TEST_CASE("state round trip: AdamW", "[optim]") {
  check_round_trip([](std::vector<Tensor> p) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::AdamW>(std::move(p), optim::AdamWOptions{.lr = 0.05});
  });
}

TEST_CASE("state names, lazy creation, and copies", "[optim]") {
  std::vector<Tensor> params = make_parameters(kFloat64);
  optim::Adam adam(params);
  CHECK(adam.state().empty());  // nothing before the first step, like PyTorch
  set_grads(params, 0);
  adam.step();
  optim::StateDict state = adam.state();
  std::vector<std::string> names;
  for (const auto& entry : state) names.push_back(entry.first);
  // Parameter 1 had no gradient, so it has no state yet.
  CHECK(names == std::vector<std::string>{"0.step", "0.exp_avg", "0.exp_avg_sq", "2.step",
                                          "2.exp_avg", "2.exp_avg_sq"});
  CHECK(state[0].second.ndim() == 0);
  CHECK(state[0].second.dtype() == kFloat64);
  CHECK(state[1].second.shape() == Shape{2});
  // The StateDict is a copy: later steps do not change it.
  const std::vector<double> m = state[1].second.to_vector();
  set_grads(params, 1);
  adam.step();
  CHECK(state[1].second.to_vector() == m);
  CHECK(adam.state()[1].second.to_vector() != m);
  // SGD without momentum keeps nothing.
  optim::SGD sgd(params, {.lr = 0.1});
  sgd.step();
  CHECK(sgd.state().empty());
}

TEST_CASE("load_state converts the state to the parameters' dtype", "[optim]") {
  std::vector<Tensor> p32 = make_parameters(kFloat32), p64 = make_parameters(kFloat64);
  optim::Adam a32(p32);
  set_grads(p32, 0);
  a32.step();
  optim::Adam a64(p64);
  a64.load_state(a32.state(), a32.steps_taken());
  optim::StateDict state = a64.state();
  REQUIRE(state.size() == 6);
  CHECK(state[1].second.dtype() == kFloat64);
  check_close(state[1].second, a32.state()[1].second, 0);
}

TEST_CASE("load_state errors name the entry", "[optim]") {
  std::vector<Tensor> params = make_parameters(kFloat64);
  optim::Adam adam(params);
  set_grads(params, 0);
  adam.step();
  const optim::StateDict good = adam.state();  // entries for parameters 0 and 2

  // Same parameter count, but parameter 2 is [4] instead of [3].
  std::vector<Tensor> other = {parameter({1, 2}, kFloat64),
                               tensor({1, 2, 3, 4}, {2, 2}, kFloat64).requires_grad_(),
                               parameter({1, 2, 3, 4}, kFloat64)};
  optim::Adam fresh(other);
  CHECK_THAT(error_message([&] { fresh.load_state(good, 1); }),
             Contains("Adam.load_state: optimizer state '2.exp_avg' has shape [3] in the "
                      "checkpoint but the parameter is [4]"));
  CHECK(fresh.state().empty());  // a failed load changes nothing
  CHECK(fresh.steps_taken() == 0);

  auto changed = [&](auto edit) {
    optim::StateDict state = good;
    edit(state);
    return error_message([&] { adam.load_state(state, 1); });
  };
  CHECK_THAT(changed([](optim::StateDict& s) { s[1].first = "0.momentum_buffer"; }),
             Contains("Adam.load_state: unknown optimizer state '0.momentum_buffer' (Adam keeps "
                      "'step', 'exp_avg', 'exp_avg_sq' per parameter)"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[1].first = "exp_avg"; }),
             Contains("optimizer state 'exp_avg' is not named '<parameter index>.<buffer>'"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[1].first = "00.exp_avg"; }),
             Contains("optimizer state '00.exp_avg' is not named"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[4].first = "7.exp_avg"; }),
             Contains("optimizer state '7.exp_avg' is for parameter 7, but the optimizer has 3 "
                      "parameters"));
  CHECK_THAT(changed([](optim::StateDict& s) { s.erase(s.begin() + 5); }),
             Contains("Adam.load_state: optimizer state '2.exp_avg_sq' is missing (the "
                      "checkpoint has other state for parameter 2"));
  CHECK_THAT(changed([](optim::StateDict& s) { s.push_back(s[0]); }),
             Contains("optimizer state '0.step' appears twice in the checkpoint"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[1].second = NDArray::zeros({2}, kInt64); }),
             Contains("optimizer state '0.exp_avg' is int64; it must be float32 or float64"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[1].second = NDArray(); }),
             Contains("optimizer state '0.exp_avg' is undefined"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[0].second = NDArray::scalar(-1, kFloat64); }),
             Contains("optimizer state '0.step' must be a whole number >= 0, got -1"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[0].second = NDArray::scalar(1.5, kFloat64); }),
             Contains("optimizer state '0.step' must be a whole number >= 0, got 1.5"));
  CHECK_THAT(changed([](optim::StateDict& s) { s[0].second = NDArray::zeros({2}); }),
             Contains("optimizer state '0.step' must be a 0-d array holding a count, got shape "
                      "[2]"));
  CHECK_THAT(error_message([&] { adam.load_state(good, -1); }),
             Contains("Adam.load_state: steps_taken must be >= 0, got -1"));
  // An int64 step count (as another writer might save it) is accepted.
  optim::StateDict int_step = good;
  int_step[0].second = NDArray::scalar(4, kInt64);
  adam.load_state(int_step, 4);
  CHECK(adam.state()[0].second.item() == 4);
  CHECK(adam.steps_taken() == 4);
}

TEST_CASE("load_state errors for SGD", "[optim]") {
  Tensor p = parameter({1, 2}, kFloat64);
  optim::SGD momentum({p}, {.lr = 0.1, .momentum = 0.9});
  set_grad(p, {1, 1});
  momentum.step();
  optim::SGD plain({p}, {.lr = 0.1});
  CHECK_THAT(error_message([&] { plain.load_state(momentum.state(), 1); }),
             Contains("SGD.load_state: unknown optimizer state '0.momentum_buffer' (SGD keeps no "
                      "state with these options)"));
  plain.load_state({}, 5);
  CHECK(plain.steps_taken() == 5);
  optim::StateDict wrong = {{"0.momentum_buffer", NDArray::zeros({3}, kFloat64)}};
  CHECK_THAT(error_message([&] { momentum.load_state(wrong, 1); }),
             Contains("SGD.load_state: optimizer state '0.momentum_buffer' has shape [3] in the "
                      "checkpoint but the parameter is [2]"));
}
