// Lesson 13, part 2: lesson 11's encoder-decoder Transformer on dates, read with the methods
// of part 1 and taken apart at inference through MultiheadAttention::weights_hook. One file
// per section of docs/13_reading_attention.md:
//
//   dates_model.cpp        Dates 1: lesson 11's trained model, loaded (or trained here)
//   dates_decoding.cpp     decoding the test dates under a hook; scores of a decoding and of
//                          a set of maps (what every section measures with)
//   dates_methods.cpp      Dates 2: raw cross-attention, rollout, relevance, baselines,
//                          scored against the true source spans
//   dates_heads.cpp        Dates 3: every head masked in turn, then pruned step by step
//   dates_replacement.cpp  Dates 4: the cross-attention permuted, flattened or swapped at
//                          inference ("attention is not explanation", measured)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attend.h"
#include "program.h"

namespace attend::lesson13 {

using seq::Decoded;
// A map per output character of one date (row i: a weight per input character), and one
// such map per test date: what interpret::alignment_accuracy scores.
using Rows = std::vector<std::vector<double>>;
using MapSet = std::vector<Rows>;

// Lesson 11's trained model, its test dates, and its intact greedy outputs.
struct DatesModel {
  seq::DateTask task;
  std::unique_ptr<seq::TransformerSeq2Seq> model;
  bool trained_here = false;         // no checkpoint: trained by this program
  std::vector<Decoded> decoded;      // greedy, the test dates in order
  std::vector<std::string> outputs;  // the same as strings
  double exact_match = 0;
};

// What the sections found, for the summary.
struct DatesSummary {
  double exact_match = 0;
  std::string best_method;  // the best alignment of section Dates 2
  double best_method_alignment = 0;
  double relevance_alignment = 0;
  int heads = 0, heads_prunable = 0;  // prunable: pruned (in order) while exact match stays >= 99%
  std::string carriers;               // the heads whose masking costs alignment
  double permuted_changed = 0;        // share of outputs changed by permuted cross-attention
};

// ---- dates_model.cpp ---------------------------------------------------------------------

seq::TransformerSizes dates_sizes(const seq::DateTask& task, const Options& o);
// Dates 1: loads --dates-model (or trains the model with lesson 11's recipe and a smaller
// budget when the default file is missing) and decodes the test dates.
DatesModel section_dates_model(app::Transcript& t, const Options& o);

// ---- dates_decoding.cpp ------------------------------------------------------------------

// Test dates are decoded (and read back) this many at a time.
constexpr Index kDecodeBatch = 250;
// Called before each batch with its source mask [B, S] (1 = a real character): hooks that
// need to know where the padding is read it.
using BatchStart = std::function<void(const NDArray& source_mask)>;

// Greedy decoding of the test dates with whatever hooks are set.
std::vector<Decoded> decode_test_dates(DatesModel& m, const BatchStart& on_batch = {});

// How a decoding did: exact match, the share of dates whose output differs from the intact
// model's, and (with_alignment) the alignment accuracy of every decoder layer's
// cross-attention (head mean), as decoding computed it.
struct DecodingScore {
  double exact_match = 0, changed = 0;
  std::vector<double> alignment;  // per decoder layer; empty without with_alignment
};
// Greedy decoding of the test dates with the hooks set, scored. With alignment, a recording
// hook wraps each cross-attention's hook for the run: it keeps the rows each step used.
DecodingScore decode_and_score(DatesModel& m, const BatchStart& on_batch = {},
                               bool with_alignment = true);

// The test dates [start, end) with their decoded outputs fed back to the decoder
// (<bos> y_1 .. y_n): row i of every decoder map is the step that wrote character i + 1.
seq::Batch decoded_batch(const DatesModel& m, const std::vector<Decoded>& decoded,
                         std::size_t start, std::size_t end);
// Example b of per-head weights [B, H, Tq, Tk]: [H, rows, keys], float64.
NDArray example_maps(const Tensor& weights, Index b, Index rows, Index keys);
// The rows of a [rows, keys] matrix.
Rows matrix_rows(const NDArray& matrix);

// A set of maps against the true source spans: alignment accuracy (is the largest entry
// inside the span?) and the mean share of a row's mass inside it, over the digits.
struct MapScore {
  double alignment = 0, mass = 0;
};
MapScore score_maps(const std::vector<data::DateExample>& examples, const MapSet& maps);

// The three kinds of attention of the model, and the module of each layer.
enum class AttentionKind { kEncoderSelf, kDecoderSelf, kCross };
std::string kind_name(AttentionKind kind);
nn::MultiheadAttention& attention_module(seq::TransformerSeq2Seq& model, AttentionKind kind,
                                         Index layer);
// Removes every weights hook of the model.
void clear_hooks(seq::TransformerSeq2Seq& model);

// A progress line on stderr (with --progress): "what: done/total (seconds)".
void progress(const Options& o, const std::string& what, std::size_t done, std::size_t total,
              double seconds);

// ---- dates_methods.cpp -------------------------------------------------------------------

// Dates 2: every method's maps for the decoded test dates, scored against the true spans,
// in one table with a random and a uniform map; the maps of one date in a figure.
void section_dates_methods(app::Transcript& t, const Options& o, DatesModel& m,
                           DatesSummary& summary);

// ---- dates_heads.cpp ---------------------------------------------------------------------

// Dates 3: each head masked alone (exact match and alignment drops), then the heads pruned
// from the least important up, with the curve plotted.
void section_dates_heads(app::Transcript& t, const Options& o, DatesModel& m,
                         DatesSummary& summary);

// ---- dates_replacement.cpp ---------------------------------------------------------------

// What replaces each row of the cross-attention (dates_replacement.cpp says more).
enum class Replacement { kPermuted, kUniform, kOtherDate };
std::string replacement_name(Replacement r);

// How far the replaced rows moved: summed total variation distance and Jensen-Shannon
// divergence (nats), and how many rows.
struct Movement {
  double tvd = 0, jsd = 0;
  std::size_t rows = 0;
  void add(const std::vector<double>& p, const std::vector<double>& q);
};

// Every row of the cross-attention weights [B, H, Tq, S] replaced, over the unpadded
// positions of each date (source_mask [B, S], 1 = real): what the hook of Dates 4 returns.
NDArray replace_rows(const NDArray& weights, const NDArray& source_mask, Replacement kind,
                     Generator& gen, Movement& moved);

// Dates 4: the cross-attention replaced at inference (permuted, uniform, another date's):
// how often the output changes, beside how far the weights moved.
void section_dates_replacement(app::Transcript& t, const Options& o, DatesModel& m,
                               DatesSummary& summary);

// The summary lines of part 2.
void say_dates_summary(app::Transcript& t, const DatesSummary& summary);

}  // namespace attend::lesson13
