// Scoring a model on the date task: its greedy outputs, exact match overall, by input length
// and by format, the length curve as a CSV file (so that two lessons' curves can share a
// plot), and the labels of the date heatmaps.
#pragma once

#include <string>
#include <vector>

#include "nn/viz/attention_json.h"
#include "seq/date_task.h"
#include "seq/decoding.h"

namespace attend::seq {

// The longest output decoding produces: "yyyy-mm-dd" and <eos>, plus one (a longer output is
// wrong, and cut there).
constexpr Index kMaxDateLength = 12;

// The model's greedy outputs for the examples, as strings, in order.
std::vector<std::string> predict_dates(Seq2SeqModel& model, const DateTask& task,
                                       const std::vector<data::DateExample>& examples,
                                       Index batch_size = 250);

// The same greedy outputs as decoded tokens, with the attention of every step.
std::vector<Decoded> decode_dates(Seq2SeqModel& model, const DateTask& task,
                                  const std::vector<data::DateExample>& examples,
                                  Index batch_size = 250);

// Decoded outputs as date strings.
std::vector<std::string> date_strings(const DateTask& task, const std::vector<Decoded>& decoded);

// The share of predictions equal to their target, character for character.
double exact_match(const std::vector<data::DateExample>& examples,
                   const std::vector<std::string>& predictions);

// Beam search against greedy decoding on the first `count` examples (or all, if fewer), one
// date at a time. `greedy` holds the greedy outputs of the examples (decode_dates). On the
// first `checks` of them beam search of width 1 is run too: it must give the greedy output,
// token for token.
struct BeamComparison {
  std::size_t dates = 0;                                // examples decoded by beam search
  double greedy_exact_match = 0, beam_exact_match = 0;  // on those examples; 0 if none
  std::size_t width_one_checked = 0, width_one_same = 0;
};
BeamComparison compare_beam_with_greedy(Seq2SeqModel& model, const DateTask& task,
                                        const std::vector<data::DateExample>& examples,
                                        const std::vector<Decoded>& greedy, std::size_t count,
                                        const BeamOptions& beam, std::size_t checks = 50);

// Input lengths [low, high] with their number of examples and of exact matches.
struct LengthBucket {
  int low = 0, high = 0;
  int count = 0, correct = 0;
  double accuracy() const { return count > 0 ? static_cast<double>(correct) / count : 0.0; }
};
// Buckets of kBucketWidth characters from kShortestDate on (the same edges in every lesson,
// so their curves can share axes), in order; empty buckets are left out.
constexpr int kShortestDate = 6, kBucketWidth = 4;  // "3/3/15" is the shortest date
std::vector<LengthBucket> accuracy_by_length(const std::vector<data::DateExample>& examples,
                                             const std::vector<std::string>& predictions);

// Exact matches per date format (data::kDateFormats entries, in format order).
struct FormatScore {
  int count = 0, correct = 0;
  double accuracy() const { return count > 0 ? static_cast<double>(correct) / count : 0.0; }
};
std::vector<FormatScore> accuracy_by_format(const std::vector<data::DateExample>& examples,
                                            const std::vector<std::string>& predictions);

// The curve as CSV (low,high,count,correct,accuracy) and read back (throws attend::Error on
// a missing or malformed file).
void write_length_curve(const std::string& path, const std::vector<LengthBucket>& buckets);
std::vector<LengthBucket> read_length_curve(const std::string& path);

// A bucket's x position on a plot: its middle length.
double bucket_middle(const LengthBucket& bucket);

// A character as a heatmap label: a space is drawn as '_' (an empty label is invisible).
std::vector<std::string> character_labels(const std::string& text);
// One heatmap label per output token (a special token such as <unk> stays one label, so the
// labels always match the rows of interpret::attention_matrix), then "<eos>" if the output
// finished.
std::vector<std::string> output_labels(const data::Vocabulary& vocabulary, const Decoded& decoded);

// The position of the first date of each format in `dates`, in order of position (the
// attention viewer shows one date per format).
std::vector<std::size_t> first_date_of_each_format(const std::vector<data::DateExample>& dates);

// A decoded date as an example for the attention viewer (nn/viz/attention_json.h): the input
// characters as source tokens, output_labels as target tokens and, if the output is the true
// date, each run of output characters that come from one input span as a true span. The
// caller adds the maps (rows: the target tokens; columns: the input characters).
viz::AttentionExample date_attention_example(const data::Vocabulary& target_vocabulary,
                                             const data::DateExample& example,
                                             const Decoded& decoded);

}  // namespace attend::seq
