// Positional encodings: attention treats its input as a set, so a Transformer adds to each
// token's vector a vector that says where the token is (Vaswani et al. 2017, section 3.5).
//
// Both modules take x of shape [B, T, D] (batch first) and return x + P[:T], where P is a
// [max_len, D] table broadcast over the batch:
//   SinusoidalPositionalEncoding  P fixed, sines and cosines of geometric frequencies
//   LearnedPositionalEmbedding    P a parameter, one learned vector per position (GPT-2)
// A sequence longer than max_len, or a D other than d_model, is an error naming the shapes.
#pragma once

#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

// The [max_len, d_model] float32 table of the paper:
//   PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
//   PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
// Each pair of columns is a rotation at its own frequency, so PE(pos + k) is a linear
// function of PE(pos) for a fixed offset k. Row 0 is [0, 1, 0, 1, ...]. An odd d_model
// works: its last column is a sine without its cosine partner (PyTorch's tutorial code
// requires an even d_model; the formula does not).
Tensor sinusoidal_positions(Index max_len, Index d_model);

class SinusoidalPositionalEncoding : public UnaryModule {
 public:
  explicit SinusoidalPositionalEncoding(Index d_model, Index max_len = 5000);
  // x + PE[:T], the table converted to x's dtype (float64 for a gradcheck).
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;

  Index d_model, max_len;

 private:
  NDArray table_;  // a buffer, not a parameter: it is neither trained nor saved
};

// A learned table, initialised N(0, 0.02^2) as in GPT-2 (Radford et al. 2019, the
// released code's wpe; PyTorch's nn.Embedding would start at N(0, 1)).
class LearnedPositionalEmbedding : public UnaryModule {
 public:
  LearnedPositionalEmbedding(Index max_len, Index d_model, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;  // x + weight[:T]
  Tensor positions(Index length) const;      // weight[:length], [length, d_model]
  std::string describe() const override;

  Tensor weight;  // [max_len, d_model]
};

}  // namespace attend::nn
