// The CNN that reads a canvas as a grid of region features (lesson 08, section 2). Show,
// Attend and Tell reads an image as VGG's 14x14x512 conv5_4 map, one 512-d vector per
// 16x16-pixel region of a 224x224 photo; here a small CNN trained from scratch plays VGG's
// part: three blocks of conv3x3 + ReLU + 2x2 max pooling turn a 64x64 canvas into an 8x8 grid
// of 64-d vectors, one per 8x8-pixel region.
//
// Each pooling halves the grid, so grid cell (i, j) of the output looks mostly at pixels
// 8i..8i+7, 8j..8j+7 of the canvas (its receptive field, 22x22 pixels, reaches 7 pixels
// beyond). That alignment is what lets a map over the grid be drawn over the canvas.
#pragma once

#include <string>

#include "nn/conv.h"
#include "nn/module.h"

namespace attend::vision {

// conv3x3 (padding 1, so the grid keeps its size) + ReLU + 2x2 max pooling (halves it). The
// convolution starts with He initialisation (He et al. 2015).
class ConvBlock : public nn::UnaryModule {
 public:
  ConvBlock(Index in_channels, Index out_channels, Generator& gen);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;

  nn::Conv2d conv;
};

// The widths of REF-SAT's encoder (/work/shared/bench/ref_sat.py): 32, 64, 64 channels.
struct EncoderShape {
  Index in_channels = 3;
  Index channels1 = 32, channels2 = 64, channels3 = 64;
};

// Three ConvBlocks: [B, 3, S, S] -> [B, channels3, S/8, S/8]. For a 64x64 canvas that is an
// 8x8 grid of 64-d feature vectors, one per 8x8-pixel region: the "annotation vectors" a_i
// of Show, Attend and Tell (there 14x14x512 from VGG), which an attention model weighs.
class CanvasEncoder : public nn::UnaryModule {
 public:
  static constexpr int kBlocks = 3;

  explicit CanvasEncoder(const EncoderShape& shape = {}, Generator& gen = default_generator());
  Tensor forward(const Tensor& images) override { return forward_blocks(images, 0, kBlocks); }
  // Runs blocks first..last-1 (0-based) on x: forward_blocks(images, 0, 2) is the 16x16 grid
  // of block 2, and forward_blocks(that, 2, 3) finishes the encoder from it. When first is 0,
  // x is a batch of images and is standardised first.
  Tensor forward_blocks(const Tensor& x, int first, int last);
  // (x - mean) / std before the first block, so that the first layer sees values of size
  // about 1 (the canvases are mostly black: pixel mean ~0.03, std ~0.13; pixel_statistics in
  // canvas_set.h measures them). Off: 0 and 1.
  void set_input_statistics(double mean, double std);
  double input_mean() const { return input_mean_; }
  double input_std() const { return input_std_; }
  Index out_channels() const { return shape_.channels3; }
  const EncoderShape& shape() const { return shape_; }
  std::string describe() const override;

  ConvBlock block1, block2, block3;

 private:
  EncoderShape shape_;
  double input_mean_ = 0, input_std_ = 1;
};

}  // namespace attend::vision
