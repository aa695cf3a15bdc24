// The canvas encoder (canvas_encoder.h): three blocks of conv3x3 + ReLU + 2x2 max pooling.
#include "vision/canvas_encoder.h"

#include <cmath>

#include "autograd/ops.h"
#include "nn/pool.h"
#include "tensor/error.h"

namespace attend::vision {

// The kernel of every convolution, and the padding that keeps the grid's size.
constexpr Index kKernel = 3, kPadding = 1;
// Every block halves the grid.
constexpr Index kPool = 2;

ConvBlock::ConvBlock(Index in_channels, Index out_channels, Generator& gen)
    : conv(in_channels, out_channels, kKernel, /*stride=*/1, kPadding, /*bias=*/true, gen) {
  // He et al. (2015), eq. (10): weights ~ N(0, 2 / fan_in) keep the size of the activations
  // from layer to layer through a ReLU (which zeroes half of them), and biases start at 0.
  // PyTorch's default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), has a variance 6 times smaller,
  // so that after three blocks the features start tiny and training is slow to begin.
  const Index fan_in = in_channels * kKernel * kKernel;
  conv.weight.data() =
      NDArray::normal(conv.weight.shape(), gen, 0, std::sqrt(2.0 / static_cast<double>(fan_in)));
  conv.bias.data() = NDArray::zeros({out_channels});
  register_module("conv", conv);
}

// conv, ReLU, max-pool, computed as conv, max-pool, ReLU: the maximum of ReLUs is the ReLU of
// the maximum, and the gradient goes to the same element, so every number is the same while
// the ReLU and its backward touch a quarter of the elements (seq/captioning/region_encoder.cpp).
Tensor ConvBlock::forward(const Tensor& x) {
  return relu(nn::max_pool2d(conv(x), kPool));
}

std::string ConvBlock::describe() const {
  return fmt::format("ConvBlock({} -> {}: conv3x3 + ReLU + maxpool2)", conv.weight.size(1),
                     conv.weight.size(0));
}

CanvasEncoder::CanvasEncoder(const EncoderShape& shape, Generator& gen)
    : block1(shape.in_channels, shape.channels1, gen),
      block2(shape.channels1, shape.channels2, gen),
      block3(shape.channels2, shape.channels3, gen),
      shape_(shape) {
  register_module("block1", block1);
  register_module("block2", block2);
  register_module("block3", block3);
}

Tensor CanvasEncoder::forward_blocks(const Tensor& x, int first, int last) {
  if (first < 0 || last > kBlocks || first > last)
    fail("CanvasEncoder: blocks {}..{} do not exist (there are {})", first, last, kBlocks);
  if (x.ndim() != 4) fail("CanvasEncoder: expects [B, C, H, W], got {}", x.shape());
  ConvBlock* blocks[kBlocks] = {&block1, &block2, &block3};
  Tensor out = first == 0 ? (x - input_mean_) / input_std_ : x;
  for (int b = first; b < last; ++b) out = blocks[b]->forward(out);
  return out;
}

void CanvasEncoder::set_input_statistics(double mean, double std) {
  if (!std::isfinite(mean) || !(std > 0))
    fail("CanvasEncoder: input statistics need a finite mean and a positive std, got {} and {}",
         mean, std);
  input_mean_ = mean;
  input_std_ = std;
}

std::string CanvasEncoder::describe() const {
  return fmt::format("CanvasEncoder({} -> {} -> {} -> {} channels, grid / 8)", shape_.in_channels,
                     shape_.channels1, shape_.channels2, shape_.channels3);
}

}  // namespace attend::vision
