// Pooling: summarise each k x k window of every channel by one number.
//
//   max_pool2d: y[b, c, i, j] = max over the window at (i*stride, j*stride) of x[b, c, ., .]
//   avg_pool2d: y[b, c, i, j] = mean over that window
//
// x [B, C, H, W] -> y [B, C, Ho, Wo], Ho = (H - kernel) / stride + 1 (rounded down), the same
// for Wo. The stride defaults to the kernel size (windows side by side, as in PyTorch). No
// padding: every window lies inside the input.
//
// global_avg_pool2d averages each whole channel, [B, C, H, W] -> [B, C]: the "global average
// pooling" in front of the classifier of a CNN (and of class activation maps, Zhou et al.
// 2016). It is composed from reshape and mean, so it needs no backward of its own.
#pragma once

#include "nn/module.h"

namespace attend::nn {

// Backward: the whole gradient of a window goes to its largest element (the first one in
// row-major order on ties); where windows overlap, an element collects from each window.
Tensor max_pool2d(const Tensor& x, Index kernel_size, Index stride);
inline Tensor max_pool2d(const Tensor& x, Index kernel_size) {
  return max_pool2d(x, kernel_size, kernel_size);
}

// Backward: each element of a window gets 1/(kernel*kernel) of the window's gradient.
Tensor avg_pool2d(const Tensor& x, Index kernel_size, Index stride);
inline Tensor avg_pool2d(const Tensor& x, Index kernel_size) {
  return avg_pool2d(x, kernel_size, kernel_size);
}

Tensor global_avg_pool2d(const Tensor& x);

class MaxPool2d : public UnaryModule {
 public:
  explicit MaxPool2d(Index kernel_size) : MaxPool2d(kernel_size, kernel_size) {}
  MaxPool2d(Index kernel_size, Index stride);
  Tensor forward(const Tensor& x) override { return max_pool2d(x, kernel_size, stride); }
  std::string describe() const override;

  Index kernel_size, stride;
};

class AvgPool2d : public UnaryModule {
 public:
  explicit AvgPool2d(Index kernel_size) : AvgPool2d(kernel_size, kernel_size) {}
  AvgPool2d(Index kernel_size, Index stride);
  Tensor forward(const Tensor& x) override { return avg_pool2d(x, kernel_size, stride); }
  std::string describe() const override;

  Index kernel_size, stride;
};

class GlobalAvgPool2d : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return global_avg_pool2d(x); }
  std::string describe() const override { return "GlobalAvgPool2d"; }
};

}  // namespace attend::nn
