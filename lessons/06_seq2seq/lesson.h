// Lesson 06: sequence to sequence without attention. What main.cpp runs, in the order of the
// chapter (docs/06_seq2seq.md):
//
//   task_report.cpp       section 1: the date task, and a batch of it as token ids and masks
//   encoder_decoder.cpp   the RNN encoder-decoder of Cho et al. (2014), which squeezes the
//                         whole input into one vector c
//
// The rest comes from the library (seq/, in attend.h): the date task as token ids, the
// encoder-decoder interface every model implements, teacher forcing, greedy decoding and
// beam search, the training loop, and the date evaluation.
#pragma once

#include <string>

#include "attend.h"

namespace attend::lesson06 {

using seq::DecoderStep;
using seq::Encoded;
using seq::ModelSizes;

// Section 1: the date task's splits and formats, its vocabularies, and a batch of two test
// dates as token ids, masks, decoder inputs and targets.
void describe_date_task(app::Transcript& t, const seq::DateTask& task);

// The RNN encoder-decoder (Cho et al. 2014; "RNNencdec" in Bahdanau et al. 2015):
//   encoder   h_t = GRU(E x_t, h_{t-1}),  c = h_{T_x}           (eq. 1, c = q(...) = h_{T_x})
//   decoder   s_0 = tanh(W_s c),  s_i = GRU([E y_{i-1}; c], s_{i-1})
//   output    p(y_i | y_<i, x) = softmax(W_o [s_i; c; E y_{i-1}] + b_o)      (eq. 3)
// Everything the decoder knows about the input has to fit in the n numbers of c.
class EncoderDecoder : public seq::Seq2SeqModel {
 public:
  explicit EncoderDecoder(const ModelSizes& sizes, Generator& gen = default_generator());
  Encoded encode(const Tensor& source, const Tensor& mask) override;
  DecoderStep step(const Encoded& encoded, const Tensor& previous_state,
                   const Tensor& previous_tokens) override;
  Tensor output_layer(const Tensor& features) override { return readout(features); }
  bool has_attention() const override { return false; }
  std::string describe() const override { return "EncoderDecoder"; }

  nn::Embedding source_embedding;  // E for the source, <pad> stays 0
  nn::Embedding target_embedding;  // E for the target
  nn::GRU encoder;
  nn::Linear init_state;  // W_s: c -> s_0
  nn::GRUCell decoder;    // input [E y_{i-1}; c]
  nn::Linear readout;     // W_o: [s_i; c; E y_{i-1}] -> V
};

}  // namespace attend::lesson06
