// Lesson 11: a Transformer on the date task. What main.cpp runs, in the order of the chapter
// (docs/11_transformer.md), one file each:
//
//   model_report.cpp       section 1: the equations with this run's sizes, the parameters,
//                          the gradcheck of a tiny model
//   date_report.cpp        sections 2-3: training, exact match on the held-out dates,
//                          decoding with and without the key/value cache, beam search
//   attention_report.cpp   section 4: alignment accuracy of every layer and head, the maps
//   comparison.cpp         sections 5-6: lesson 07's RNNsearch trained in the same run, and
//                          the ablations
//
// The model (seq::TransformerSeq2Seq), the date task, training, decoding and the date
// evaluation come from the library (seq/), the alignment accuracy from interpret/.
#pragma once

#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson11 {

using seq::Decoded;

// The date task's and its training's flags (seq::DateTrainingFlags), then the model's and
// this lesson's own. A Transformer learns the dates in more epochs than lesson 07's RNNsearch
// (which has recurrence and so the order of the characters built in): up to 20.
struct Options : seq::DateTrainingFlags {
  Options() : DateTrainingFlags({.epochs = 20, .seconds = 300, .lr = 5e-3}) {}

  Index d_model = flag(d_model, "d-model", 64, "d_model, the width of every position's vector",
                       app::at_least<Index>(1));
  Index heads = flag(heads, "heads", 4, "attention heads h (d_model must be a multiple of h)",
                     app::at_least<Index>(1));
  Index layers = flag(layers, "layers", 2, "encoder layers N, and as many decoder layers",
                      app::at_least<Index>(1));
  Index feedforward = flag(feedforward, "ff", 256, "inner size d_ff of the feed-forward network",
                           app::at_least<Index>(1));
  double dropout =
      flag(dropout, "dropout", 0.1, "dropout P_drop in every sub-layer", app::between(0.0, 0.9));
  std::string positions =
      flag(positions, "positions", "sinusoidal", "positional encoding: sinusoidal, learned or none",
           app::one_of({"sinusoidal", "learned", "none"}));
  bool norm_first = flag(norm_first, "norm-first", false,
                         "pre-norm layers (GPT-2) instead of the paper's post-norm");
  bool tie = flag(tie, "tie", false,
                  "the output layer shares the target embedding's matrix (section 3.4)");
  std::string schedule = flag(schedule, "schedule", "noam",
                              "learning rate: noam (eq. 3: warm-up, then 1/sqrt(step), peak --lr), "
                              "warmup (warm-up, then --lr) or constant",
                              app::one_of({"noam", "warmup", "constant"}));
  Index warmup = flag(warmup, "warmup", 200, "warm-up steps of --schedule noam and warmup",
                      app::at_least<Index>(1));
  Index beam = flag(beam, "beam", 5, "beam width", app::at_least<Index>(1));
  Index beam_dates = flag(beam_dates, "beam-dates", 200, "test dates decoded by beam search too",
                          app::at_least<Index>(0));
  bool bahdanau =
      flag(bahdanau, "bahdanau", true,
           "train lesson 07's RNNsearch (its default sizes) in the same run, to compare");
  bool ablations = flag(ablations, "ablations", false,
                        "train the ablations (no positions, 1 head, pre-norm, no warm-up) too");
  int ablation_epochs = flag(ablation_epochs, "ablation-epochs", 5,
                             "epochs of each ablation's training", app::at_least(1));
  double ablation_seconds =
      flag(ablation_seconds, "ablation-seconds", 120,
           "time budget of each ablation's training (a safety net)", app::above(0.0));
  std::string out = flag(out, "out", "output/11_transformer",
                         "folder for summary.txt, the CSV files and the plots");
  std::string save_model =
      flag(save_model, "save-model", "transformer.ckpt",
           "file in --out the trained model is saved to (lesson 13 reads it); none: not saved");
};

// What the default run is expected to reach.
constexpr double kExactMatchTarget = 0.995, kAlignmentTarget = 0.90;

// The model's sizes from the flags.
seq::TransformerSizes transformer_sizes(const seq::DateTask& task, const Options& o);
// The learning rate of every step, from --schedule, --lr and --warmup.
optim::Schedule learning_rate_schedule(const Options& o);

// ---- model_report.cpp --------------------------------------------------------------------

// Section 1: the equations with this run's sizes, the parameters, and a float64 gradcheck of
// a tiny model of the same kind.
void describe_model(app::Transcript& t, seq::TransformerSeq2Seq& model, const Options& o);

// ---- date_report.cpp ---------------------------------------------------------------------

// One trained model's scores on the held-out dates: what the comparison tables print.
struct ModelScores {
  std::string name;
  Index parameters = 0;
  seq::TrainingResult training;
  std::vector<Decoded> decoded;  // greedy, test dates in order
  double exact_match = 0;
  double alignment = 0;            // the alignment accuracy of the attention decoding reports
  double best_head_alignment = 0;  // Transformer: the best single head's
  std::string best_head;           // e.g. "layer 2 head 3"
  double decode_ms = 0;            // greedy decoding time per test date (batches of 250)
};

// Section 2: trains the model (on --schedule) and reports the run.
seq::TrainingResult train_transformer(app::Transcript& t, seq::TransformerSeq2Seq& model,
                                      const seq::DateTask& task, const Options& o, Generator& gen,
                                      const std::string& csv, bool report);

// Greedy decoding of the test dates, timed: exact match and milliseconds per date.
ModelScores decode_test_dates(seq::Seq2SeqModel& model, const seq::DateTask& task);

// Section 3: exact match on the test dates, the key/value cache against recomputation
// (outputs and time), beam search, the wrong outputs.
void score_dates(app::Transcript& t, seq::TransformerSeq2Seq& model, const seq::DateTask& task,
                 ModelScores& scores, const Options& o);

// ---- attention_report.cpp ----------------------------------------------------------------

// The cross-attention of every decoder layer and head for the decoded test dates:
// weights[layer][head][example][output i] = attention over the source positions, with
// head == H the average of the layer's heads.
using AttentionRows = std::vector<std::vector<double>>;
std::vector<std::vector<std::vector<AttentionRows>>> cross_attention_of(
    seq::TransformerSeq2Seq& model, const seq::DateTask& task, const std::vector<Decoded>& decoded);

// The alignment accuracy of each of them: [layer][head], the last column the average.
std::vector<std::vector<double>> alignment_table(
    const seq::DateTask& task, const std::vector<std::vector<std::vector<AttentionRows>>>& weights);
// The best single head of the table into scores.best_head(_alignment), and the last layer's
// average (what decoding reports) into scores.alignment.
void best_head(const std::vector<std::vector<double>>& table, ModelScores& scores);

// Section 4: alignment accuracy for every layer and head and the head averages, as a table;
// the maps of one date (cross-attention: layer x head, plus the average; encoder
// self-attention). Fills scores.alignment (the last layer's head average, what decoding
// reports) and the best head.
void score_alignment(app::Transcript& t, seq::TransformerSeq2Seq& model, const seq::DateTask& task,
                     ModelScores& scores, const Options& o);

// ---- comparison.cpp ----------------------------------------------------------------------

// Section 5: lesson 07's RNNsearch with its default sizes, trained here on the same dates,
// scored the same way.
ModelScores train_bahdanau(app::Transcript& t, const seq::DateTask& task, const Options& o);
// The table of both models.
void compare_models(app::Transcript& t, const ModelScores& transformer, const ModelScores& rnn);

// Section 6: each ablation is the default model with one flag changed, trained for
// --ablation-epochs (the same number of steps for every row, whatever the machine's load);
// one row each, the default model's first.
void run_ablations(app::Transcript& t, const seq::DateTask& task, const Options& o);

}  // namespace attend::lesson11
