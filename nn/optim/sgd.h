// SGD: stochastic gradient descent, with optional momentum, Nesterov momentum and L2
// weight decay, exactly as PyTorch's torch.optim.SGD. For each parameter p with gradient g:
//
//   g   = g + weight_decay * p                          (L2 penalty wd/2 |p|^2)
//   buf = momentum * buf + (1 - dampening) * g          (buf = g on the first step)
//   g   = nesterov ? g + momentum * buf : buf           (only when momentum != 0)
//   p   = p - lr * g
//
// Momentum (Polyak 1964; Sutskever et al. 2013 for the Nesterov form) keeps a running
// velocity so that steps along a consistent direction add up and oscillations cancel.
//
//   optim::SGD sgd(model.parameters(), {.lr = 0.1, .momentum = 0.9});
#pragma once

#include "nn/optim/optimizer.h"

namespace attend::optim {

struct SGDOptions {
  double lr = 1e-3;  // PyTorch's default since 2.2
  double momentum = 0;
  double dampening = 0;
  bool nesterov = false;  // needs momentum > 0 and dampening == 0
  double weight_decay = 0;
};

class SGD : public Optimizer {
 public:
  explicit SGD(std::vector<Tensor> parameters, const SGDOptions& options = {});

  void step() override;
  // "<i>.momentum_buffer" for each parameter updated so far (nothing without momentum).
  StateDict state() const override;
  void load_state(const StateDict& state, std::int64_t steps_taken) override;

  const SGDOptions& options() const { return options_; }

 private:
  SGDOptions options_;
  std::vector<NDArray> momentum_buffers_;  // one per parameter, undefined until its first step
};

}  // namespace attend::optim
