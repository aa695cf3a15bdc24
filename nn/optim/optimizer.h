// Optimizer: the base of SGD, Adam and AdamW. An optimizer holds the parameters it updates
// and whatever per-parameter state its rule needs (momentum, moment estimates). One
// training step is:
//
//   optimizer.zero_grad();      // forget the previous step's gradients
//   Tensor loss = ...;          // forward
//   loss.backward();            // gradients into each parameter's grad()
//   optimizer.step();           // update the parameters from their gradients
//
// Updates change the parameters' values in place and record nothing in the graph.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace attend::optim {

// Named arrays of optimizer state, e.g. {"3.exp_avg", [256, 784] array}: parameter 3's
// first-moment estimate. Checkpoints save and restore them.
using StateDict = std::vector<std::pair<std::string, NDArray>>;

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> parameters, double learning_rate);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (parameters without one are skipped).
  virtual void step() = 0;
  void zero_grad();

  double learning_rate() const { return learning_rate_; }
  void set_learning_rate(double learning_rate);  // schedules call this every step
  std::int64_t steps_taken() const { return steps_; }
  const std::vector<Tensor>& parameters() const { return parameters_; }

  // The state for a checkpoint (the step count is saved separately by the checkpoint)...
  virtual StateDict state() const { return {}; }
  // ...and back. Throws attend::Error naming the entry if a name or shape does not match.
  virtual void load_state(const StateDict& state, std::int64_t steps_taken);

 protected:
  std::vector<Tensor> parameters_;
  double learning_rate_;
  std::int64_t steps_ = 0;
};

}  // namespace attend::optim
