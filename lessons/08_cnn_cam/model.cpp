// (b) The model. Show, Attend and Tell reads an image as a grid of region features: VGG's
// 14x14x512 conv5_4 map, one 512-d vector per 16x16-pixel region of a 224x224 photo. Here a
// small CNN trained from scratch plays VGG's part: three blocks of conv3x3 + ReLU + 2x2 max
// pooling turn a 64x64 canvas into an 8x8 grid of 64-d vectors, one per 8x8-pixel region.
//
// Each pooling halves the grid, so grid cell (i, j) of the output looks mostly at pixels
// 8i..8i+7, 8j..8j+7 of the canvas (its receptive field, 22x22 pixels, reaches 7 pixels
// beyond). That alignment is what lets a map over the grid be drawn over the canvas.
#include <cmath>

#include "lesson.h"

namespace attend::lesson08 {

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

Tensor ConvBlock::forward(const Tensor& x) {
  return nn::max_pool2d(relu(conv(x)), kPool);
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

CamClassifier::CamClassifier(const EncoderShape& shape, Index classes, Generator& gen)
    : encoder(shape, gen), classifier(shape.channels3, classes, /*bias=*/true, gen) {
  register_module("encoder", encoder);
  register_module("classifier", classifier);
}

Tensor CamClassifier::forward(const Tensor& images) {
  return classify(encoder(images));
}

// F_k = mean over the grid of f_k (global average pooling), then s_c = sum_k w_k^c F_k + b_c.
// Zhou et al. write F_k as a sum; the mean only divides every w_k^c by the number of cells.
Tensor CamClassifier::classify(const Tensor& features) {
  return classifier(nn::global_avg_pool2d(features));
}

}  // namespace attend::lesson08
