// Lesson 06: sequence to sequence without attention. The functions that main.cpp runs, in
// the order of the chapter (docs/06_seq2seq.md), one file each:
//
//   batches.cpp      the date task as token ids: vocabularies, the fixed held-out set, padded
//                    batches with masks, batches of similar lengths
//   seq2seq.cpp      the interface every encoder-decoder of lessons 06 and 07 implements
//                    (encode once, then decode one token at a time), teacher forcing, the
//                    loss, and the RNN encoder-decoder of Cho et al. (2014), which squeezes
//                    the whole input into one vector c
//   decoding.cpp     greedy decoding and beam search
//   training.cpp     the training loop: Adam, gradient clipping, a time budget, early
//                    stopping on the validation set, progress and a CSV log
//   evaluation.cpp   exact match, accuracy against input length, and its CSV file
//
// Lesson 07 (Bahdanau attention) links this library and reuses all of it except the model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attend.h"
#include "lessons/common/transcript.h"

namespace attend::lesson06 {

using data::DateExample;
using data::Vocabulary;
using TokenIds = std::vector<std::int64_t>;

// ---- batches.cpp -------------------------------------------------------------------------

// B pairs of sequences padded to common lengths S (source) and T (target).
struct Batch {
  Tensor source;         // [B, S] int64, <pad> after each sequence's end
  Tensor source_mask;    // [B, S] float32: 1 for a real token, 0 for padding
  Tensor decoder_input;  // [B, T] int64: <bos> y_1 ... y_{T-1}  (what teacher forcing feeds)
  Tensor target;         // [B, T] int64: y_1 ... y_n <eos>, then <pad>  (what is predicted)
  Index size() const { return source.size(0); }
};

// Pads the sequences (no <bos>/<eos> in them: make_batch adds those to the targets).
// Every source must have at least one token.
Batch make_batch(const std::vector<TokenIds>& sources, const std::vector<TokenIds>& targets);

// The characters the date generator writes (letters, digits, " ,./-") and those of the
// "yyyy-mm-dd" outputs (digits and '-'), after the four special tokens.
Vocabulary date_source_vocabulary();
Vocabulary date_target_vocabulary();

struct DateTask {
  Vocabulary source_vocabulary = date_source_vocabulary();
  Vocabulary target_vocabulary = date_target_vocabulary();
  std::vector<DateExample> train, validation, test;
};
// make_date_splits fills its first split first, so asking it for the test set first keeps
// the held-out dates the same whatever the training size: lessons 06 and 07 (with the same
// seed) are scored on the very same dates.
DateTask make_date_task(std::size_t train, std::size_t validation, std::size_t test,
                        std::uint64_t seed);

// The examples picked by `rows`, encoded with the task's vocabularies.
Batch date_batch(const DateTask& task, const std::vector<DateExample>& examples,
                 const std::vector<std::size_t>& rows);

// Batches of example indices for one epoch, as Bahdanau et al. (2015, section 4.2) make
// them: shuffle, take pools of `pool_batches` batches, sort each pool by length, cut it
// into batches and shuffle the batches. Padding is then small and the encoder runs fewer
// steps, while every batch is still a random sample of the data.
std::vector<std::vector<std::size_t>> length_sorted_batches(const std::vector<Index>& lengths,
                                                            Index batch_size, Generator& gen,
                                                            Index pool_batches = 20);

// ---- seq2seq.cpp -------------------------------------------------------------------------

// What the decoder reads about the source, computed once per batch by encode().
struct Encoded {
  Tensor memory;  // no attention: the summary c [B, C]; attention: annotations h_j [B, S, 2n]
  Tensor keys;    // attention: the keys' part of the score, precomputed [B, S, A]
  Tensor mask;    // [B, S]: 1 for real source tokens
  Tensor initial_state;  // s_0 [B, n]
};

// One step of the decoder.
struct DecoderStep {
  Tensor state;     // s_i [B, n]
  Tensor features;  // [B, F]: what the output layer reads to score y_i, e.g. [s_i; c; E y_{i-1}]
  Tensor weights;   // attention: alpha_i [B, S] (0 at padding); undefined without attention
};

// The interface of every encoder-decoder in lessons 06 and 07: teacher forcing, greedy
// decoding and beam search are written once against it.
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
};

// The rows `rows` (int64 [K]) of every tensor of `encoded`: beam search runs K hypotheses of
// one sentence as a batch of K.
Encoded select_rows(const Encoded& encoded, const Tensor& rows);

// Teacher forcing: the decoder is fed the true previous token y_{i-1} at every step (not its
// own guess), so all T steps of a batch are trained at once.
struct TeacherForced {
  Tensor logits;   // [B, T, V]
  Tensor weights;  // [B, T, S]: the attention of every step; undefined without attention
};
TeacherForced teacher_forced(Seq2SeqModel& model, const Batch& batch);

// The mean cross-entropy over the real (non-<pad>) target tokens: -1/N sum log p(y_i | ...),
// the negative log of eq. (2) of Bahdanau et al. (2015) per token.
Tensor sequence_loss(const Tensor& logits, const Tensor& target);

// The sizes of a model. The same struct serves lesson 07's attention model.
struct ModelSizes {
  Index source_vocabulary = 0;
  Index target_vocabulary = 0;
  Index embedding = 16;  // m, the size of a token's embedding
  Index hidden = 64;     // n, the GRU state (per direction in lesson 07's encoder)
  Index attention = 64;  // n', the alignment model's hidden layer (lesson 07 only)
  Index maxout = 32;     // l, the maxout units of the deep output (lesson 07 only)
};

// The RNN encoder-decoder (Cho et al. 2014; "RNNencdec" in Bahdanau et al. 2015):
//   encoder   h_t = GRU(E x_t, h_{t-1}),  c = h_{T_x}           (eq. 1, c = q(...) = h_{T_x})
//   decoder   s_0 = tanh(W_s c),  s_i = GRU([E y_{i-1}; c], s_{i-1})
//   output    p(y_i | y_<i, x) = softmax(W_o [s_i; c; E y_{i-1}] + b_o)      (eq. 3)
// Everything the decoder knows about the input has to fit in the n numbers of c.
class EncoderDecoder : public Seq2SeqModel {
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

// ---- checks.cpp --------------------------------------------------------------------------

// Two sentences of different lengths on both sides (so both are padded), with ids below
// `vocabulary`: the batch of the gradchecks.
Batch tiny_batch(Index vocabulary);

// gradcheck (float64, its default tolerances) of the mean loss of teacher forcing on the
// batch, with respect to every parameter of the model. Convert the model first: to(kFloat64).
GradcheckResult gradcheck_model(Seq2SeqModel& model, const Batch& batch);

// What attention weights [B, T, S] must satisfy: every row alpha_i sums to 1 over the source,
// and padded source positions get exactly 0.
struct AttentionInvariants {
  Index rows = 0, masked_positions = 0;  // how many were checked
  double largest_row_sum_error = 0;      // max |sum_j alpha_ij - 1|
  double largest_masked_weight = 0;      // max alpha_ij at padding: must be exactly 0
};
AttentionInvariants check_attention(const Tensor& weights, const Tensor& source_mask);

// ---- decoding.cpp ------------------------------------------------------------------------

struct Decoded {
  TokenIds tokens;  // the output, without <bos> and <eos>
  // The attention weights alpha_i over the S source positions (padding included, where they
  // are 0) for each output token, <eos> included; empty without attention.
  std::vector<std::vector<double>> weights;
  double log_probability = 0;  // log p(tokens, <eos> | x)
  bool finished = false;       // ended with <eos> (not cut at max_length)
};

// At every step the most probable token, fed back as the next input; all B sentences of the
// batch at once, until each has produced <eos> or max_length tokens.
std::vector<Decoded> greedy_decode(Seq2SeqModel& model, const Tensor& source, const Tensor& mask,
                                   Index max_length);

struct BeamOptions {
  Index width = 5;
  Index max_length = 50;
  // A finished hypothesis is ranked by log p / length^length_penalty (length counts <eos>):
  // 0 ranks by log p alone, which favours short outputs (every token lowers log p); 1
  // ranks by the mean log-probability per token.
  double length_penalty = 1.0;
};

// Beam search for one sentence (source [1, S]): keeps the `width` most probable partial
// outputs, extends each by every token, keeps the best `width` again; a hypothesis that
// produces <eos> is set aside as finished. Stops when `width` hypotheses have finished (or
// at max_length) and returns the best finished one. Width 1 is greedy decoding.
Decoded beam_search(Seq2SeqModel& model, const Tensor& source, const Tensor& mask,
                    const BeamOptions& options);

// ---- training.cpp ------------------------------------------------------------------------

struct TrainingOptions {
  int max_epochs = 30;
  double seconds = 60;  // stop after this much training time (checked after every step)
  double learning_rate = 3e-3;
  double clip_norm = 1.0;          // global gradient norm (Bahdanau et al. 2015 clip at 1)
  double stop_at = 2.0;            // stop once the validation score reaches this (above 1: never)
  std::string log_path = "";       // CSV of every epoch; "" for none
  std::string label = "training";  // the progress line's unit
};

struct TrainingResult {
  int epochs = 0;
  Index steps = 0;
  double seconds = 0;
  std::vector<double> train_loss;        // per epoch
  std::vector<double> validation_score;  // per epoch
  bool reached_target = false;
  bool out_of_time = false;
};

// Adam with a constant learning rate and gradient-norm clipping. `batches`
// gives one epoch's batches; `validate` scores the model (e.g. exact match) after each epoch.
TrainingResult train(Seq2SeqModel& model, const std::function<std::vector<Batch>()>& batches,
                     const std::function<double()>& validate, const TrainingOptions& options);

// Prints one line per epoch (training loss, validation exact match) and how the training
// ended, and draws both curves into `png` (lessons 06 and 07 train on dates the same way).
void report_date_training(lessons::Transcript& t, const TrainingResult& r, const std::string& png,
                          const std::string& title);

// Teacher-forced scores on held-out batches, without recording a graph: the mean
// cross-entropy per real target token, and the share of those tokens that are the most
// probable ones (argmax of the logits) given the true prefix.
struct HeldOutLoss {
  double loss = 0;
  double token_accuracy = 0;
};
HeldOutLoss held_out_loss(Seq2SeqModel& model, const std::vector<Batch>& batches);

// ---- evaluation.cpp ----------------------------------------------------------------------

// The model's greedy outputs for the examples, as strings, in order.
std::vector<std::string> predict_dates(Seq2SeqModel& model, const DateTask& task,
                                       const std::vector<DateExample>& examples,
                                       Index batch_size = 250);

// The share of predictions equal to their target, character for character.
double exact_match(const std::vector<DateExample>& examples,
                   const std::vector<std::string>& predictions);

// Input lengths [low, high] with their number of examples and of exact matches.
struct LengthBucket {
  int low = 0, high = 0;
  int count = 0, correct = 0;
  double accuracy() const { return count > 0 ? static_cast<double>(correct) / count : 0.0; }
};
// Buckets of kBucketWidth characters from kShortestDate on (the same edges in both lessons,
// so their curves can share axes), in order; empty buckets are left out.
constexpr int kShortestDate = 6, kBucketWidth = 4;  // "3/3/15" is the shortest date
std::vector<LengthBucket> accuracy_by_length(const std::vector<DateExample>& examples,
                                             const std::vector<std::string>& predictions);

// Exact matches per date format (data::kDateFormats entries, in format order).
struct FormatScore {
  int count = 0, correct = 0;
  double accuracy() const { return count > 0 ? static_cast<double>(correct) / count : 0.0; }
};
std::vector<FormatScore> accuracy_by_format(const std::vector<DateExample>& examples,
                                            const std::vector<std::string>& predictions);

// The curve as CSV (low,high,count,correct,accuracy) and read back (throws attend::Error on
// a missing or malformed file).
void write_length_curve(const std::string& path, const std::vector<LengthBucket>& buckets);
std::vector<LengthBucket> read_length_curve(const std::string& path);

// A bucket's x position on a plot: its middle length.
double bucket_middle(const LengthBucket& bucket);

}  // namespace attend::lesson06
