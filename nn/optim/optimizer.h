// Optimizer: the base of SGD, Adam and AdamW. An optimizer holds the parameters it updates
// and whatever per-parameter state its rule needs (momentum, moment estimates). One
// training step is:
//
//   optimizer.zero_grad();      // forget the previous step's gradients
//   Tensor loss = ...;          // forward
//   loss.backward();            // gradients into each parameter's grad()
//   optimizer.step();           // update the parameters from their gradients
//
// Updates change the parameters' values in place and record nothing in the graph: they
// work on the NDArrays behind the Tensors, never on Tensors, so no op is ever created.
//
// State. Like PyTorch, an optimizer creates a parameter's buffers lazily, on the first step
// that updates it, so state() is empty before any step. Each buffer is saved under the name
// "<parameter index>.<buffer>" ("0.momentum_buffer", "2.exp_avg"), the index being the
// parameter's position in the list given to the constructor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace attend::optim {

// Named arrays of optimizer state, e.g. {"3.exp_avg", [256, 784] array}: parameter 3's
// first-moment estimate. Checkpoints save and restore them.
using StateDict = std::vector<std::pair<std::string, NDArray>>;

class Optimizer {
 public:
  // Throws if the list is empty, holds an undefined tensor, a tensor that does not require
  // grad, or the same tensor twice (it would be updated twice per step).
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

  // The state for a checkpoint (the step count is saved separately by the checkpoint). The
  // arrays are copies: later steps do not change a StateDict already taken...
  virtual StateDict state() const { return {}; }
  // ...and back. Throws attend::Error naming the entry if a name or shape does not match.
  // Nothing changes unless the whole StateDict is valid.
  virtual void load_state(const StateDict& state, std::int64_t steps_taken);

 protected:
  // Every parameter's gradient, in order; an undefined array for a parameter that has none
  // (step() skips it). Throws, naming `op`, if a gradient's shape or dtype differs from its
  // parameter's. step() calls this and check_buffer() before changing anything, so an
  // error leaves every parameter as it was.
  std::vector<NDArray> gradients(std::string_view op) const;
  // Throws, naming `op`, unless `buffer` (parameter i's state called `name`) still matches
  // the parameter in shape and dtype, e.g. after the model was converted with to().
  void check_buffer(std::size_t i, const NDArray& buffer, std::string_view name,
                    std::string_view op) const;
  void check_steps_taken(std::int64_t steps_taken, std::string_view op) const;

  std::vector<Tensor> parameters_;
  double learning_rate_;
  std::int64_t steps_ = 0;
};

}  // namespace attend::optim
