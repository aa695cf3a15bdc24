#include "nn/positional_encoding.h"

#include <cmath>

#include "autograd/ops.h"
#include "nn/init.h"
#include "tensor/shape_ops.h"

namespace attend::nn {
namespace {

// x must be [B, T, D] with T <= max_len and D == d_model; returns T.
Index check_sequence(std::string_view op, const Tensor& x, Index max_len, Index d_model) {
  if (!x.defined()) fail("{}: the input is undefined", op);
  if (x.ndim() != 3) fail("{}: input must be [B, T, D] (batch first), got {}", op, x.shape());
  if (x.size(2) != d_model)
    fail("{}: input {} has D = {}, but the table is [{}, {}] (d_model = {})", op, x.shape(),
         x.size(2), max_len, d_model, d_model);
  if (x.size(1) > max_len)
    fail("{}: sequence length T = {} (input {}) exceeds max_len = {}", op, x.size(1), x.shape(),
         max_len);
  return x.size(1);
}

void check_sizes(std::string_view op, Index max_len, Index d_model) {
  if (max_len < 1 || d_model < 1)
    fail("{}: max_len and d_model must be >= 1, got {} and {}", op, max_len, d_model);
}

}  // namespace

Tensor sinusoidal_positions(Index max_len, Index d_model) {
  check_sizes("sinusoidal_positions", max_len, d_model);
  NDArray table = NDArray::empty({max_len, d_model}, kFloat32);
  float* out = table.data<float>();
  for (Index j = 0; j < d_model; ++j) {
    // Columns 2i and 2i+1 share the frequency 1 / 10000^(2i / d_model), computed in double.
    const double two_i = static_cast<double>(j - j % 2);
    const double frequency = std::pow(10000.0, -two_i / static_cast<double>(d_model));
    for (Index pos = 0; pos < max_len; ++pos) {
      const double angle = static_cast<double>(pos) * frequency;
      out[pos * d_model + j] = static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return Tensor(table);
}

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(Index d_model, Index max_len)
    : d_model(d_model), max_len(max_len) {
  check_sizes("SinusoidalPositionalEncoding", max_len, d_model);
  table_ = sinusoidal_positions(max_len, d_model).data();
}

Tensor SinusoidalPositionalEncoding::forward(const Tensor& x) {
  const Index length = check_sequence("SinusoidalPositionalEncoding", x, max_len, d_model);
  // [T, D] broadcasts over the batch; the table is a constant, so no gradient goes to it.
  return x + Tensor(slice(table_, 0, 0, length).to(x.dtype()));
}

std::string SinusoidalPositionalEncoding::describe() const {
  return fmt::format("SinusoidalPositionalEncoding(d_model={}, max_len={})", d_model, max_len);
}

LearnedPositionalEmbedding::LearnedPositionalEmbedding(Index max_len, Index d_model,
                                                       Generator& gen) {
  check_sizes("LearnedPositionalEmbedding", max_len, d_model);
  weight = init::normal({max_len, d_model}, 0.02, gen);
  register_parameter("weight", weight);
}

Tensor LearnedPositionalEmbedding::forward(const Tensor& x) {
  const Index length =
      check_sequence("LearnedPositionalEmbedding", x, weight.size(0), weight.size(1));
  return x + positions(length);  // the gradient of each used row is summed over the batch
}

Tensor LearnedPositionalEmbedding::positions(Index length) const {
  if (length < 0 || length > weight.size(0))
    fail("LearnedPositionalEmbedding::positions: length {} is not in [0, max_len = {}]", length,
         weight.size(0));
  return slice(weight, 0, 0, length);
}

std::string LearnedPositionalEmbedding::describe() const {
  return fmt::format("LearnedPositionalEmbedding({} x {})", weight.size(0), weight.size(1));
}

}  // namespace attend::nn
