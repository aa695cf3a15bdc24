// RNNsearch: the encoder-decoder with attention of Bahdanau, Cho & Bengio (2015), a
// bidirectional GRU encoder and a GRU decoder that attends to every annotation h_j at every
// step. Lesson 07 teaches it; later lessons train it as the baseline of the Transformer.
#pragma once

#include <memory>
#include <string>

#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/gru.h"
#include "nn/linear.h"
#include "seq/model.h"

namespace attend::seq {

// How the decoder state s_{i-1} is scored against an annotation h_j.
enum class Scoring {
  kAdditive,  // e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)   (Bahdanau et al. 2015, A.1.2)
  kGeneral    // e_ij = s_{i-1}^T W h_j                      (Luong et al. 2015, "general")
};
Scoring parse_scoring(const std::string& name);  // "additive" or "general"
std::string scoring_name(Scoring scoring);

// How the output layer turns the decoder's state into next-word scores.
enum class Readout {
  // The deep output of A.2.2: t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i (2l units),
  // t_i = [max(t~_{i,2j-1}, t~_{i,2j})]_{j=1..l} (maxout), logits = W_o t_i.
  kMaxout,
  // One linear map of the new state: logits = W_o [s_i; c_i; E y_{i-1}] + b_o (as in
  // /work/shared's REF-BAHDANAU and most tutorials).
  kLinear
};
Readout parse_readout(const std::string& name);  // "maxout" or "linear"
std::string readout_name(Readout readout);

// RNNsearch. With n = sizes.hidden, m = sizes.embedding, n' = sizes.attention, l =
// sizes.maxout:
//   annotations  h_j = [h_fwd_j; h_bwd_j]  (eq. 7), a bidirectional GRU over E x
//   first state  s_0 = tanh(W_s h_bwd_1 + b_s)                        (A.2.2)
//   scores       e_ij = a(s_{i-1}, h_j)                                (eq. 6, A.1.2)
//   weights      alpha_ij = exp(e_ij) / sum_k exp(e_ik), over real positions   (eq. 6)
//   context      c_i = sum_j alpha_ij h_j                              (eq. 5)
//   output       p(y_i | y_<i, x) = softmax(readout)                   (eq. 4, A.2.2)
//   state        s_i = GRU([E y_{i-1}; c_i], s_{i-1})                  (A.2.2)
// The biases the paper leaves out are all there (every Linear and the GRU have them).
class AttentionSeq2Seq : public Seq2SeqModel {
 public:
  explicit AttentionSeq2Seq(const ModelSizes& sizes, Scoring scoring = Scoring::kAdditive,
                            Readout readout = Readout::kMaxout,
                            Generator& gen = default_generator());
  Encoded encode(const Tensor& source, const Tensor& mask) override;
  DecoderStep step(const Encoded& encoded, const Tensor& previous_state,
                   const Tensor& previous_tokens) override;
  Tensor output_layer(const Tensor& features) override;
  bool has_attention() const override { return true; }
  std::string describe() const override { return "AttentionSeq2Seq"; }
  Scoring scoring() const { return scoring_; }
  Readout readout_kind() const { return readout_; }

  nn::Embedding source_embedding;
  nn::Embedding target_embedding;
  nn::GRU encoder;        // bidirectional, n per direction
  nn::Linear init_state;  // W_s: h_bwd_1 [n] -> s_0 [n]
  // The alignment model: one of the two, as `scoring` says.
  std::unique_ptr<nn::AdditiveScore> additive;  // W_a [n -> n'], U_a [2n -> n'], v_a [n' -> 1]
  std::unique_ptr<nn::Linear> general;          // W [2n -> n]: s^T (W h_j)
  nn::GRUCell decoder;                          // input [E y_{i-1}; c_i], size m + 2n
  // maxout: [U_o V_o C_o] [s_{i-1}; c_i; E y_{i-1}] -> 2l; undefined for the linear readout.
  std::unique_ptr<nn::Linear> deep_output;
  nn::Linear readout;  // W_o: t_i [l] -> V (maxout), or [s_i; c_i; E y_{i-1}] -> V (linear)

 private:
  Scoring scoring_;
  Readout readout_;
};

}  // namespace attend::seq
