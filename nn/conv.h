// Conv2d: a 2-D convolution (strictly, a cross-correlation, as in every deep learning library).
//
//   y[b, o, i, j] = bias[o] + sum over c, u, v of
//                   weight[o, c, u, v] * x[b, c, i*stride - padding + u, j*stride - padding + v]
//
// x [B, C, H, W] -> y [B, O, Ho, Wo], with Ho = (H + 2*padding - kh) / stride + 1 (rounded
// down) and the same for Wo. Positions outside the input read as 0 (zero padding).
//
// It is computed as matrix products (conv.cpp): for each sample, "im2col" copies every
// C x kh x kw patch of the input into one column of a matrix, and the convolution becomes
// weight [O, C*kh*kw] @ columns [C*kh*kw, Ho*Wo]. The gradients are products too.
//
// Initialisation (PyTorch's default): weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
// fan_in = C * kh * kw, the number of inputs that each output sums over.
#pragma once

#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

// The op behind Conv2d, usable on its own: x [B, C, H, W], weight [O, C, kh, kw], bias [O]
// or undefined (no bias). float32 or float64. stride >= 1 and padding >= 0 apply to both
// spatial axes.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Index stride = 1,
              Index padding = 0);

class Conv2d : public UnaryModule {
 public:
  Conv2d(Index in_channels, Index out_channels, Index kernel_size, Index stride = 1,
         Index padding = 0, bool bias = true, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override { return conv2d(x, weight, bias, stride, padding); }
  std::string describe() const override;

  Tensor weight;  // [out_channels, in_channels, kernel_size, kernel_size]
  Tensor bias;    // [out_channels], undefined without bias
  Index stride, padding;
};

}  // namespace attend::nn
