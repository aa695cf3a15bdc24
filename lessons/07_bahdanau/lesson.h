// Lesson 07: Bahdanau attention. The functions that main.cpp runs, in the order of the
// chapter (docs/07_bahdanau.md), one file each:
//
//   bahdanau.cpp      RNNsearch (Bahdanau, Cho & Bengio 2015): a bidirectional GRU encoder,
//                     a GRU decoder that attends to every annotation h_j at every step
//   alignment.cpp     alignment accuracy (does attention look where the digit comes from?)
//                     and the date heatmaps
//   bleu.cpp          corpus BLEU-4 (Papineni et al. 2002) with the brevity penalty
//   translation.cpp   German-English sentence pairs as word ids, and their translation
//
// Batches, teacher forcing, greedy decoding, beam search, the training loop and the date
// evaluation come from lesson 06 (lessons/06_seq2seq/lesson.h).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "lessons/06_seq2seq/lesson.h"

namespace attend::lesson07 {

using lesson06::Batch;
using lesson06::DateExample;
using lesson06::Decoded;
using lesson06::DecoderStep;
using lesson06::Encoded;
using lesson06::ModelSizes;
using lesson06::TokenIds;
using lesson06::Vocabulary;

// ---- bahdanau.cpp ------------------------------------------------------------------------

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
class AttentionSeq2Seq : public lesson06::Seq2SeqModel {
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

// ---- alignment.cpp -----------------------------------------------------------------------

// For every output digit of every example (the '-' separators have no source and are
// skipped): is the input position with the largest attention weight alpha_ij inside the
// span the digit comes from? weights[e][i] is alpha_i over the input positions for output
// character i of example e (from decoding); a digit the model did not produce counts as a
// miss.
struct AlignmentScore {
  int digits = 0, hits = 0;
  double accuracy() const { return digits > 0 ? static_cast<double>(hits) / digits : 0.0; }
};
AlignmentScore alignment_accuracy(const std::vector<DateExample>& examples,
                                  const std::vector<std::vector<std::vector<double>>>& weights);

// The greedy outputs of the model for the examples, with the attention of every step.
std::vector<Decoded> decode_dates(lesson06::Seq2SeqModel& model, const lesson06::DateTask& task,
                                  const std::vector<DateExample>& examples, Index batch_size = 250);

// A character as a heatmap label: a space is drawn as '_' (an empty label is invisible).
std::vector<std::string> character_labels(const std::string& text);
// One heatmap label per output token (a special token such as <unk> stays one label, so the
// labels always match the rows of attention_matrix), then "<eos>" if the output finished.
std::vector<std::string> output_labels(const Vocabulary& vocabulary, const Decoded& decoded);

// The attention of one decoded output as a [output tokens + <eos>, source tokens] matrix (the
// padding columns dropped), ready for viz::plot_attention.
NDArray attention_matrix(const Decoded& decoded, Index source_length);

// ---- bleu.cpp ----------------------------------------------------------------------------

using Words = std::vector<std::string>;

struct BleuOptions {
  int max_order = 4;  // BLEU-4
  // Chen & Cherry (2014) smoothing 1: an order with no matching n-gram counts epsilon
  // matches instead of 0 (otherwise one such order makes the whole BLEU 0). Off for corpus
  // BLEU, as in Papineni et al.; on for the BLEU of a single sentence.
  bool smooth = false;
  double epsilon = 0.1;
};

struct Bleu {
  double score = 0;                // in [0, 1]; reported x 100
  std::vector<Index> matches;      // clipped n-gram matches, n = 1..max_order
  std::vector<Index> totals;       // candidate n-grams
  std::vector<double> precisions;  // p_n = matches / totals (smoothed if asked)
  Index candidate_length = 0;      // c
  Index reference_length = 0;      // r
  double brevity_penalty = 1;      // 1 if c > r, else exp(1 - r/c)
};

// Corpus BLEU with one reference per candidate: clipped n-gram counts, candidate n-gram
// counts and lengths are summed over the corpus before dividing (papers.md section 12):
//   BLEU = BP * exp(sum_n (1/N) log p_n).
Bleu corpus_bleu(const std::vector<Words>& candidates, const std::vector<Words>& references,
                 const BleuOptions& options = {});
// One sentence, smoothed.
double sentence_bleu(const Words& candidate, const Words& reference);

// ---- translation.cpp ---------------------------------------------------------------------

// German-English pairs as words: "Ich habe Hunger." -> {"ich", "habe", "hunger", "."}.
struct TranslationTask {
  Vocabulary source_vocabulary, target_vocabulary;
  std::vector<Words> train_source, train_target;
  std::vector<Words> validation_source, validation_target;
  std::vector<Words> test_source, test_target;
};

// The words seen at least min_count times, most frequent first (ties in alphabetical
// order); every other word becomes <unk>.
Vocabulary word_vocabulary(const std::vector<Words>& sentences, int min_count);

// Splits the pairs (data::split_pairs) and builds both vocabularies from the training part.
TranslationTask make_translation_task(std::vector<data::SentencePair> pairs, std::size_t validation,
                                      std::size_t test, std::uint64_t seed, int min_count);

Batch translation_batch(const TranslationTask& task, const std::vector<Words>& sources,
                        const std::vector<Words>& targets, const std::vector<std::size_t>& rows);

// The share of a split's words that are <unk> in the vocabulary.
double unknown_share(const Vocabulary& vocabulary, const std::vector<Words>& sentences);

// Greedy (width 1, batched) or beam-search translations of the sources, as words, with
// the attention of every step.
std::vector<Decoded> translate(lesson06::Seq2SeqModel& model, const TranslationTask& task,
                               const std::vector<Words>& sources,
                               const lesson06::BeamOptions& beam);

// Words of a decoded output (stops at <eos>; <unk> stays "<unk>").
Words words_of(const Vocabulary& vocabulary, const TokenIds& tokens);

}  // namespace attend::lesson07
