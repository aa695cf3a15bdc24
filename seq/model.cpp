// The encoder-decoder interface: what every model shares.
#include "seq/model.h"

#include "autograd/ops.h"

namespace attend::seq {
namespace {

// Column i of an int64 [B, T] tensor, as [B]: the tokens fed at step i.
Tensor column(const Tensor& tokens, Index i) {
  return squeeze(slice(tokens, 1, i, i + 1), 1);
}

Tensor rows_of(const Tensor& t, const Tensor& rows) {
  return t.defined() ? index_select(t, 0, rows) : Tensor();
}

}  // namespace

Encoded select_rows(const Encoded& encoded, const Tensor& rows) {
  return {rows_of(encoded.memory, rows), rows_of(encoded.keys, rows), rows_of(encoded.mask, rows),
          rows_of(encoded.initial_state, rows)};
}

DecoderSteps Seq2SeqModel::decode_all(const Encoded& encoded, const Tensor& decoder_input) {
  Tensor state = encoded.initial_state;
  std::vector<Tensor> features, weights;
  for (Index i = 0; i < decoder_input.size(1); ++i) {
    // The true y_{i-1}, whatever the model would have guessed.
    DecoderStep step = this->step(encoded, state, column(decoder_input, i));
    state = step.state;
    features.push_back(step.features);
    if (step.weights.defined()) weights.push_back(step.weights);
  }
  return {stack(features, 1), weights.empty() ? Tensor() : stack(weights, 1)};
}

}  // namespace attend::seq
