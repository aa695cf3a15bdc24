#include "nn/optim/optimizer.h"

namespace attend::optim {

Optimizer::Optimizer(std::vector<Tensor> parameters, double learning_rate)
    : parameters_(std::move(parameters)) {
  if (parameters_.empty()) fail("optimizer: no parameters to optimise");
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (!parameters_[i].defined() || !parameters_[i].requires_grad())
      fail("optimizer: parameter {} is undefined or does not require grad", i);
  set_learning_rate(learning_rate);
}

void Optimizer::zero_grad() {
  for (Tensor& p : parameters_) p.zero_grad();
}

void Optimizer::set_learning_rate(double learning_rate) {
  if (!(learning_rate >= 0)) fail("optimizer: learning rate must be >= 0, got {}", learning_rate);
  learning_rate_ = learning_rate;
}

void Optimizer::load_state(const StateDict& state, std::int64_t steps_taken) {
  if (!state.empty())
    fail("optimizer: this optimizer keeps no state, but the checkpoint has {} entries (first: "
         "'{}')",
         state.size(), state[0].first);
  steps_ = steps_taken;
}

}  // namespace attend::optim
