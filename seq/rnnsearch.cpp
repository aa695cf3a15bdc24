// RNNsearch: the encoder-decoder with additive attention of Bahdanau, Cho & Bengio (2015).
#include "seq/rnnsearch.h"

#include "autograd/ops.h"
#include "nn/data/vocabulary.h"
#include "tensor/error.h"

namespace attend::seq {

using data::Vocabulary;

Scoring parse_scoring(const std::string& name) {
  if (name == "additive") return Scoring::kAdditive;
  if (name == "general") return Scoring::kGeneral;
  fail("--score: '{}' is not a scoring function (additive or general)", name);
}

std::string scoring_name(Scoring scoring) {
  return scoring == Scoring::kAdditive ? "additive" : "general";
}

Readout parse_readout(const std::string& name) {
  if (name == "maxout") return Readout::kMaxout;
  if (name == "linear") return Readout::kLinear;
  fail("--readout: '{}' is not an output layer (maxout or linear)", name);
}

std::string readout_name(Readout readout) {
  return readout == Readout::kMaxout ? "maxout" : "linear";
}

AttentionSeq2Seq::AttentionSeq2Seq(const ModelSizes& sizes, Scoring scoring, Readout readout_kind,
                                   Generator& gen)
    : source_embedding(sizes.source_vocabulary, sizes.embedding, Vocabulary::kPad, gen),
      target_embedding(sizes.target_vocabulary, sizes.embedding, Vocabulary::kPad, gen),
      encoder(sizes.embedding, sizes.hidden, /*bidirectional=*/true, gen),
      init_state(sizes.hidden, sizes.hidden, /*bias=*/true, gen),
      decoder(sizes.embedding + 2 * sizes.hidden, sizes.hidden, gen),
      readout(readout_kind == Readout::kMaxout ? sizes.maxout : 3 * sizes.hidden + sizes.embedding,
              sizes.target_vocabulary, /*bias=*/true, gen),
      scoring_(scoring),
      readout_(readout_kind) {
  register_module("source_embedding", source_embedding);
  register_module("target_embedding", target_embedding);
  register_module("encoder", encoder);
  register_module("init_state", init_state);
  if (scoring == Scoring::kAdditive) {
    additive =
        std::make_unique<nn::AdditiveScore>(sizes.hidden, 2 * sizes.hidden, sizes.attention, gen);
    register_module("attention", *additive);
  } else {
    general = std::make_unique<nn::Linear>(2 * sizes.hidden, sizes.hidden, /*bias=*/false, gen);
    register_module("attention", *general);
  }
  register_module("decoder", decoder);
  if (readout_kind == Readout::kMaxout) {
    // Both halves of every maxout pair come from one Linear of 2l outputs.
    deep_output = std::make_unique<nn::Linear>(3 * sizes.hidden + sizes.embedding, 2 * sizes.maxout,
                                               /*bias=*/true, gen);
    register_module("deep_output", *deep_output);
  }
  register_module("readout", readout);
}

Encoded AttentionSeq2Seq::encode(const Tensor& source, const Tensor& mask) {
  // output [B, S, 2n] holds h_j = [h_fwd_j; h_bwd_j] (0 at padding); h_n [2, B, n] holds each
  // direction's final state, and the backward direction ends at the first token: h_bwd_1.
  nn::GRUOutput run = encoder(source_embedding(source), Tensor(), mask);
  Tensor h_bwd_1 = squeeze(slice(run.h_n, 0, 1, 2), 0);
  Encoded encoded;
  encoded.memory = run.output;
  encoded.mask = mask;
  encoded.initial_state = tanh(init_state(h_bwd_1));  // s_0 = tanh(W_s h_bwd_1)
  // The keys' half of the score does not depend on i: computed once, not at every step.
  encoded.keys = scoring_ == Scoring::kAdditive ? additive->project_keys(run.output)  // U_a h_j
                                                : (*general)(run.output);             // W h_j
  return encoded;
}

DecoderStep AttentionSeq2Seq::step(const Encoded& encoded, const Tensor& previous_state,
                                   const Tensor& previous_tokens) {
  // Scores from the PREVIOUS state s_{i-1}: attention decides where to look before s_i exists.
  Tensor query = unsqueeze(previous_state, 1);  // [B, 1, n]
  Tensor scores = scoring_ == Scoring::kAdditive ? additive->score(query, encoded.keys)
                                                 : nn::dot_score(query, encoded.keys);
  nn::Attended attended = nn::attend(scores, encoded.memory, encoded.mask);  // eqs. 5 and 6
  Tensor context = squeeze(attended.context, 1);                             // c_i [B, 2n]
  Tensor y = target_embedding(previous_tokens);                              // E y_{i-1} [B, m]
  Tensor state = decoder(concat({y, context}, 1), previous_state);           // s_i
  // The deep output reads s_{i-1} (A.2.2); the linear readout reads the new state s_i.
  Tensor features = concat({readout_ == Readout::kMaxout ? previous_state : state, context, y}, 1);
  return {state, features, squeeze(attended.weights, 1)};
}

Tensor AttentionSeq2Seq::output_layer(const Tensor& features) {
  if (readout_ == Readout::kLinear) return readout(features);
  // t~ [..., 2l] -> pairs [..., l, 2] -> t_j = max of each pair [..., l] -> W_o t
  Tensor t_tilde = (*deep_output)(features);
  Shape pairs = t_tilde.shape();
  pairs[pairs.ndim() - 1] /= 2;
  pairs.push_back(2);
  return readout(max(reshape(t_tilde, pairs), -1));
}

}  // namespace attend::seq
