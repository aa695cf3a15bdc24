// The encoder-decoder interface, teacher forcing, the loss, and the model without attention.
#include "lessons/06_seq2seq/lesson.h"

namespace attend::lesson06 {
namespace {

Tensor rows_of(const Tensor& t, const Tensor& rows) {
  return t.defined() ? index_select(t, 0, rows) : Tensor();
}

// Column i of an int64 [B, T] tensor, as [B]: the tokens fed at step i.
Tensor column(const Tensor& tokens, Index i) {
  return squeeze(slice(tokens, 1, i, i + 1), 1);
}

}  // namespace

Encoded select_rows(const Encoded& encoded, const Tensor& rows) {
  return {rows_of(encoded.memory, rows), rows_of(encoded.keys, rows), rows_of(encoded.mask, rows),
          rows_of(encoded.initial_state, rows)};
}

TeacherForced teacher_forced(Seq2SeqModel& model, const Batch& batch) {
  Encoded encoded = model.encode(batch.source, batch.source_mask);
  Tensor state = encoded.initial_state;
  std::vector<Tensor> features, weights;
  for (Index i = 0; i < batch.decoder_input.size(1); ++i) {
    // The true y_{i-1}, whatever the model would have guessed.
    DecoderStep step = model.step(encoded, state, column(batch.decoder_input, i));
    state = step.state;
    features.push_back(step.features);
    if (step.weights.defined()) weights.push_back(step.weights);
  }
  // The output layer once for all steps: [B, T, F] -> [B, T, V].
  return {model.output_layer(stack(features, 1)), weights.empty() ? Tensor() : stack(weights, 1)};
}

Tensor sequence_loss(const Tensor& logits, const Tensor& target) {
  return nn::cross_entropy(logits, target, {.ignore_index = Vocabulary::kPad});
}

EncoderDecoder::EncoderDecoder(const ModelSizes& sizes, Generator& gen)
    : source_embedding(sizes.source_vocabulary, sizes.embedding, Vocabulary::kPad, gen),
      target_embedding(sizes.target_vocabulary, sizes.embedding, Vocabulary::kPad, gen),
      encoder(sizes.embedding, sizes.hidden, /*bidirectional=*/false, gen),
      init_state(sizes.hidden, sizes.hidden, /*bias=*/true, gen),
      decoder(sizes.embedding + sizes.hidden, sizes.hidden, gen),
      readout(2 * sizes.hidden + sizes.embedding, sizes.target_vocabulary, /*bias=*/true, gen) {
  register_module("source_embedding", source_embedding);
  register_module("target_embedding", target_embedding);
  register_module("encoder", encoder);
  register_module("init_state", init_state);
  register_module("decoder", decoder);
  register_module("readout", readout);
}

Encoded EncoderDecoder::encode(const Tensor& source, const Tensor& mask) {
  // With the mask, the GRU's final state is its state at each sequence's last real token.
  nn::GRUOutput run = encoder(source_embedding(source), Tensor(), mask);
  Tensor c = squeeze(run.h_n, 0);  // [1, B, n] -> [B, n]: c = h_{T_x}
  Encoded encoded;
  encoded.memory = c;
  encoded.mask = mask;
  encoded.initial_state = tanh(init_state(c));  // s_0 = tanh(W_s c)
  return encoded;
}

DecoderStep EncoderDecoder::step(const Encoded& encoded, const Tensor& previous_state,
                                 const Tensor& previous_tokens) {
  const Tensor& c = encoded.memory;
  Tensor y = target_embedding(previous_tokens);               // E y_{i-1}  [B, m]
  Tensor state = decoder(concat({y, c}, 1), previous_state);  // s_i = GRU([E y_{i-1}; c], s_{i-1})
  return {state, concat({state, c, y}, 1), Tensor()};
}

}  // namespace attend::lesson06
