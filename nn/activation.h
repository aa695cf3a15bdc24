// Activation functions as modules (for Sequential), and Dropout.
#pragma once

#include "autograd/ops.h"
#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

class ReLU : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return relu(x); }
  std::string describe() const override { return "ReLU"; }
};

class Tanh : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return tanh(x); }
  std::string describe() const override { return "Tanh"; }
};

class Sigmoid : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return sigmoid(x); }
  std::string describe() const override { return "Sigmoid"; }
};

// GELU(x) = x Phi(x), exact by default; GeluApproximation::tanh gives the cheaper
// approximation that GPT-2 and BERT were trained with (PyTorch's approximate="tanh").
class GELU : public UnaryModule {
 public:
  explicit GELU(GeluApproximation approximate = GeluApproximation::none)
      : approximate(approximate) {}
  Tensor forward(const Tensor& x) override { return gelu(x, approximate); }
  std::string describe() const override {
    return approximate == GeluApproximation::tanh ? "GELU(approximate='tanh')"
                                                  : "GELU(approximate='none')";
  }

  GeluApproximation approximate;
};

// Flattens every axis after the first: [B, C, H, W] -> [B, C*H*W].
class Flatten : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return flatten(x, 1); }
  std::string describe() const override { return "Flatten"; }
};

// Inverted dropout: in training, each element is zeroed with probability p and the others
// are scaled by 1/(1-p), so the expected value is unchanged and evaluation needs no scaling.
// The mask is drawn from `gen`; it is multiplied in, so the gradient is masked the same way.
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen = default_generator());

class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override { return dropout(x, p, is_training(), *gen_); }
  std::string describe() const override;

  double p;

 private:
  Generator* gen_;
};

}  // namespace attend::nn
