#include "nn/optim/optimizer.h"

#include <cmath>

namespace attend::optim {

Optimizer::Optimizer(std::vector<Tensor> parameters, double learning_rate)
    : parameters_(std::move(parameters)) {
  if (parameters_.empty()) fail("optimizer: no parameters to optimise");
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].defined() || !parameters_[i].requires_grad())
      fail("optimizer: parameter {} is undefined or does not require grad", i);
    for (std::size_t j = 0; j < i; ++j)
      if (parameters_[j].node() == parameters_[i].node())
        fail(
            "optimizer: parameter {} is the same tensor as parameter {}; it would be updated "
            "twice per step",
            i, j);
  }
  set_learning_rate(learning_rate);
}

void Optimizer::zero_grad() {
  for (Tensor& p : parameters_) p.zero_grad();
}

void Optimizer::set_learning_rate(double learning_rate) {
  if (!(learning_rate >= 0) || !std::isfinite(learning_rate))
    fail("optimizer: learning rate must be finite and >= 0, got {}", learning_rate);
  learning_rate_ = learning_rate;
}

void Optimizer::load_state(const StateDict& state, std::int64_t steps_taken) {
  if (!state.empty())
    fail(
        "optimizer: this optimizer keeps no state, but the checkpoint has {} entries (first: "
        "'{}')",
        state.size(), state[0].first);
  check_steps_taken(steps_taken, "optimizer.load_state");
  steps_ = steps_taken;
}

std::vector<NDArray> Optimizer::gradients(std::string_view op) const {
  std::vector<NDArray> grads(parameters_.size());
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const NDArray& value = parameters_[i].data();
    const NDArray& grad = parameters_[i].node()->grad;
    if (grad.defined() && (grad.shape() != value.shape() || grad.dtype() != value.dtype()))
      fail("{}: parameter {} is {} {} but its gradient is {} {}", op, i, value.shape(),
           dtype_name(value.dtype()), grad.shape(), dtype_name(grad.dtype()));
    grads[i] = grad;
  }
  return grads;
}

void Optimizer::check_buffer(std::size_t i, const NDArray& buffer, std::string_view name,
                             std::string_view op) const {
  const NDArray& value = parameters_[i].data();
  if (buffer.shape() != value.shape() || buffer.dtype() != value.dtype())
    fail(
        "{}: parameter {} is now {} {} but its {} is {} {} (was the parameter replaced or "
        "converted with to() after the optimizer started?)",
        op, i, value.shape(), dtype_name(value.dtype()), name, buffer.shape(),
        dtype_name(buffer.dtype()));
}

void Optimizer::check_steps_taken(std::int64_t steps_taken, std::string_view op) const {
  if (steps_taken < 0) fail("{}: steps_taken must be >= 0, got {}", op, steps_taken);
}

}  // namespace attend::optim
