// What the checkpoint tests share (besides scratch_dir.h): a tiny network and an optimizer
// with state (momentum), written here against the Optimizer base class so that
// the tests depend on nothing but the checkpoint code.
#pragma once

#include <bit>
#include <string>
#include <vector>

#include "nn/io/checkpoint.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "scratch_dir.h"
#include "support.h"

namespace attend::testing {

// Two layers: 4 inputs, 8 hidden units, 3 classes.
struct TinyNet : nn::Module {
  nn::Linear fc1, fc2;
  explicit TinyNet(Generator& gen, Index hidden = 8)
      : fc1(4, hidden, true, gen), fc2(hidden, 3, true, gen) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  Tensor forward(const Tensor& x) { return fc2(relu(fc1(x))); }
};

// One linear layer named "fc".
struct OneLayer : nn::Module {
  nn::Linear fc;
  OneLayer(Index in, Index out, Generator& gen) : fc(in, out, true, gen) {
    register_module("fc", fc);
  }
};

// SGD with momentum: v = mu v + g; p -= lr v. Its velocities are state a checkpoint must
// carry, or a resumed run diverges from the uninterrupted one.
class MomentumSGD : public optim::Optimizer {
 public:
  MomentumSGD(std::vector<Tensor> parameters, double learning_rate, double momentum)
      : Optimizer(std::move(parameters), learning_rate), momentum_(momentum) {
    for (const Tensor& p : parameters_) velocity_.push_back(NDArray::zeros_like(p.data()));
  }
  void step() override {
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      Tensor grad = parameters_[i].grad();
      if (!grad.defined()) continue;
      mul_(velocity_[i], momentum_);
      add_(velocity_[i], grad.data());
      add_(parameters_[i].data(), velocity_[i], -learning_rate_);
    }
    ++steps_;
  }
  optim::StateDict state() const override {
    optim::StateDict out;
    for (std::size_t i = 0; i < velocity_.size(); ++i)
      out.emplace_back(std::to_string(i) + ".velocity", velocity_[i].clone());
    return out;
  }
  void load_state(const optim::StateDict& state, std::int64_t steps_taken) override {
    if (state.size() != velocity_.size())
      fail("MomentumSGD: {} state entries for {} parameters", state.size(), velocity_.size());
    for (std::size_t i = 0; i < state.size(); ++i)
      if (state[i].first != std::to_string(i) + ".velocity" ||
          state[i].second.shape() != velocity_[i].shape())
        fail("MomentumSGD: state entry '{}' does not fit parameter {}", state[i].first, i);
    for (std::size_t i = 0; i < state.size(); ++i) copy_(velocity_[i], state[i].second);
    steps_ = steps_taken;
  }

 private:
  double momentum_;
  std::vector<NDArray> velocity_;
};

// A float's bits, to compare losses for exact equality.
inline std::uint32_t bits(const Tensor& scalar) {
  return std::bit_cast<std::uint32_t>(scalar.data().data<float>()[0]);
}

// Every parameter's values, in order.
inline std::vector<std::vector<double>> parameter_values(const nn::Module& model) {
  std::vector<std::vector<double>> out;
  for (const Tensor& p : model.parameters()) out.push_back(p.data().to_vector());
  return out;
}

}  // namespace attend::testing
