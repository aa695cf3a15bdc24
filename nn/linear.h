// Linear: y = x W^T + b, applied to the last axis of x ([..., in] -> [..., out]).
//
// The weight is [out, in] as in PyTorch, so a row of W is one output unit's weights.
// Initialisation (PyTorch's default): W and b ~ U(-1/sqrt(in), 1/sqrt(in)).
#pragma once

#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

// The fused op behind Linear, usable on its own; bias may be undefined (no bias).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

class Linear : public UnaryModule {
 public:
  Linear(Index in_features, Index out_features, bool bias = true,
         Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override { return linear(x, weight, bias); }
  std::string describe() const override;

  Tensor weight;  // [out, in]
  Tensor bias;    // [out], undefined without bias
};

}  // namespace attend::nn
