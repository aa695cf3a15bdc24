// LayerNorm (Ba, Kiros and Hinton, 2016): normalises each vector along the last axis to
// mean 0 and variance 1, then scales and shifts it by learned gamma and beta:
//   y = (x - mean) / sqrt(var + eps) * gamma + beta
// Initialisation (PyTorch's default): gamma = 1, beta = 0, eps = 1e-5. As in PyTorch, the module
// names gamma `weight` and beta `bias`, so a PyTorch state dict loads by name.
#pragma once

#include "nn/module.h"

namespace attend::nn {

// The fused op; x is [..., D], gamma and beta are [D].
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);

class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(Index dim, double eps = 1e-5);
  Tensor forward(const Tensor& x) override { return layer_norm(x, weight, bias, eps); }
  std::string describe() const override;

  Tensor weight;  // gamma [dim]
  Tensor bias;    // beta [dim]
  double eps;
};

}  // namespace attend::nn
