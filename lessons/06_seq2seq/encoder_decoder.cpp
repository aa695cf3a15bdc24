// The RNN encoder-decoder of Cho et al. (2014): the whole input squeezed into one vector c.
#include "lesson.h"

namespace attend::lesson06 {

EncoderDecoder::EncoderDecoder(const ModelSizes& sizes, Generator& gen)
    : source_embedding(sizes.source_vocabulary, sizes.embedding, data::Vocabulary::kPad, gen),
      target_embedding(sizes.target_vocabulary, sizes.embedding, data::Vocabulary::kPad, gen),
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
