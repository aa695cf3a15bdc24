// The interface of every encoder-decoder (Sutskever et al. 2014; Cho et al. 2014; Bahdanau
// et al. 2015): encode the source once, then decode one token at a time. Teacher forcing,
// the loss, greedy decoding, beam search and the training loop are written once against it.
//
//   Encoded e = model.encode(batch.source, batch.source_mask);
//   DecoderStep s = model.step(e, e.initial_state, previous_tokens);   // s_1
//   Tensor logits = model.output_layer(s.features);                    // scores of y_1
#pragma once

#include <string>

#include "autograd/tensor.h"
#include "nn/module.h"
#include "seq/batch.h"

namespace attend::seq {

// What the decoder reads about the source, computed once per batch by encode().
struct Encoded {
  Tensor memory;  // no attention: the summary c [B, C]; attention: annotations h_j [B, S, 2n]
  Tensor keys;    // attention: the keys' part of the score, precomputed [B, S, A]
  Tensor mask;    // [B, S]: 1 for real source tokens
  Tensor initial_state;  // s_0 [B, n]
};

// All T steps of the decoder under teacher forcing.
struct DecoderSteps {
  Tensor features;  // [B, T, F]
  Tensor weights;   // attention: [B, T, S]; undefined without attention
};

// One step of the decoder.
struct DecoderStep {
  Tensor state;     // s_i [B, n]
  Tensor features;  // [B, F]: what the output layer reads to score y_i, e.g. [s_i; c; E y_{i-1}]
  Tensor weights;   // attention: alpha_i [B, S] (0 at padding); undefined without attention
};

class Seq2SeqModel : public nn::Module {
 public:
  // source [B, S] int64 ids, mask [B, S] (1 = real token).
  virtual Encoded encode(const Tensor& source, const Tensor& mask) = 0;
  // From s_{i-1} [B, n] and y_{i-1} [B] (int64), the state s_i and the output features.
  virtual DecoderStep step(const Encoded& encoded, const Tensor& previous_state,
                           const Tensor& previous_tokens) = 0;
  // The output layer: features [..., F] -> logits [..., V], the unnormalised
  // log-probabilities of y_i. It is kept out of step() because nothing in the recurrence
  // depends on it: under teacher forcing it runs once on all T steps' features, one large
  // matrix product instead of T small ones (the largest one of a word-level model).
  virtual Tensor output_layer(const Tensor& features) = 0;
  virtual bool has_attention() const = 0;
  // Teacher forcing: every step fed the true previous token, decoder_input [B, T] int64
  // (<bos> y_1 ... y_{T-1}). The default runs step() T times, each waiting for the state of
  // the one before. A decoder without a recurrent state (the Transformer, whose steps read
  // only the previous tokens) overrides it with one pass over all T positions at once.
  virtual DecoderSteps decode_all(const Encoded& encoded, const Tensor& decoder_input);
};

// The rows `rows` (int64 [K]) of every tensor of `encoded`: beam search runs K hypotheses of
// one sentence as a batch of K.
Encoded select_rows(const Encoded& encoded, const Tensor& rows);

// The sizes of a model: the encoder-decoder without attention uses the first four, RNNsearch
// (seq/rnnsearch.h) all of them.
struct ModelSizes {
  Index source_vocabulary = 0;
  Index target_vocabulary = 0;
  Index embedding = 16;  // m, the size of a token's embedding
  Index hidden = 64;     // n, the GRU state (per direction in RNNsearch's encoder)
  Index attention = 64;  // n', the alignment model's hidden layer
  Index maxout = 32;     // l, the maxout units of the deep output
};

}  // namespace attend::seq
