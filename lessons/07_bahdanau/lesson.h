// Lesson 07: Bahdanau attention. What main.cpp runs, in the order of the chapter
// (docs/07_bahdanau.md), one file each:
//
//   model_report.cpp         section 1: RNNsearch's equations, its size, its gradcheck
//   date_report.cpp          sections 2-5: training on dates, exact match, alignment
//                            accuracy and the date heatmaps, accuracy against input length
//   translation.cpp          German-English sentence pairs as word ids, and their translation
//   translation_report.cpp   section 6: training on them, BLEU, the sentence heatmaps
//
// The model (RNNsearch), the date task, batches, teacher forcing, greedy decoding, beam
// search, the training loop, BLEU and the date evaluation come from the library (seq/), the
// alignment accuracy and the heatmap matrices from interpret/; all of it is in attend.h.
#pragma once

#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson07 {

using data::Vocabulary;
using seq::Batch;
using seq::Decoded;
using seq::TokenIds;
using seq::Words;

// The date task's and its training's flags (seq::DateTrainingFlags), then the model's and
// this lesson's own: each with its flag, default, help and range.
struct Options : seq::DateTrainingFlags {
  Index embedding =
      flag(embedding, "embedding", 16, "embedding size m (dates)", app::at_least<Index>(1));
  Index hidden = flag(hidden, "hidden", 64, "GRU size n, per encoder direction and decoder (dates)",
                      app::at_least<Index>(1));
  Index attention = flag(attention, "attention", 32,
                         "hidden units n' of the additive score (dates)", app::at_least<Index>(1));
  std::string score =
      flag(score, "score", "additive", "scoring function: additive (Bahdanau) or general (Luong)",
           app::one_of({"additive", "general"}));
  std::string readout =
      flag(readout, "readout", "maxout", "output layer: maxout (deep output, A.2.2) or linear",
           app::one_of({"maxout", "linear"}));
  Index maxout = flag(maxout, "maxout", 16, "maxout units l of the deep output (dates)",
                      app::at_least<Index>(1));
  Index beam = flag(beam, "beam", 5, "beam width", app::at_least<Index>(1));
  double length_penalty = flag(length_penalty, "length-penalty", 1.0,
                               "beam ranking: log p / length^this", app::at_least(0.0));
  Index beam_dates = flag(beam_dates, "beam-dates", 200, "test dates decoded by beam search too",
                          app::at_least<Index>(0));
  std::string baseline = flag(baseline, "baseline", "output/06_seq2seq/accuracy_by_length.csv",
                              "lesson 06's accuracy_by_length.csv, drawn for comparison");
  bool de_en = flag(de_en, "de-en", true, "run the German-English part");
  double de_en_seconds = flag(de_en_seconds, "de-en-seconds", 60,
                              "time budget of the German-English training", app::above(0.0));
  int de_en_epochs = flag(de_en_epochs, "de-en-epochs", 4,
                          "at most this many German-English epochs", app::at_least(1));
  Index de_en_embedding = flag(de_en_embedding, "de-en-embedding", 32,
                               "embedding size m (German-English)", app::at_least<Index>(1));
  Index de_en_hidden = flag(de_en_hidden, "de-en-hidden", 64, "GRU size n (German-English)",
                            app::at_least<Index>(1));
  Index de_en_attention =
      flag(de_en_attention, "de-en-attention", 32, "hidden units n' of the score (German-English)",
           app::at_least<Index>(1));
  Index de_en_maxout =
      flag(de_en_maxout, "de-en-maxout", 64, "maxout units l of the deep output (German-English)",
           app::at_least<Index>(1));
  int min_count = flag(min_count, "min-count", 2, "words seen fewer times in training become <unk>",
                       app::at_least(1));
  Index de_en_test = flag(de_en_test, "de-en-test", 500, "held-out German-English sentence pairs",
                          app::at_least<Index>(1));
  Index de_en_validation = flag(de_en_validation, "de-en-validation", 200,
                                "validation sentence pairs", app::at_least<Index>(1));
  Index de_en_max_pairs = flag(de_en_max_pairs, "de-en-max-pairs", 0,
                               "use only the first N pairs (0: all)", app::at_least<Index>(0));
  std::string out =
      flag(out, "out", "output/07_bahdanau", "folder for summary.txt, the CSV files and the plots");
};

// What the date part is expected to reach with the default flags.
constexpr double kExactMatchTarget = 0.995, kAlignmentTarget = 0.90;

// ---- model_report.cpp --------------------------------------------------------------------

// Section 1: the equations of RNNsearch with this run's sizes, its parameters, and a float64
// gradcheck of the whole model at tiny sizes with the invariants of its attention weights.
void describe_model(app::Transcript& t, seq::AttentionSeq2Seq& model, const Options& o);

// ---- date_report.cpp ---------------------------------------------------------------------

// Section 2: trains the model on the dates and reports the run.
seq::TrainingResult train_and_report_dates(app::Transcript& t, seq::AttentionSeq2Seq& model,
                                           const seq::DateTask& task, const Options& o,
                                           Generator& gen);

// Greedy outputs of the test dates, as strings, with their attention.
struct DateResults {
  std::vector<Decoded> decoded;
  std::vector<std::string> predictions;
  double exact_match = 0;
};
// Section 3: greedy exact match on the test dates, beam search on the first --beam-dates,
// and every wrong output.
DateResults score_dates(app::Transcript& t, seq::AttentionSeq2Seq& model, const seq::DateTask& task,
                        const Options& o);

// Section 4: alignment accuracy, overall and by output position, and the date heatmaps;
// returns the alignment accuracy.
double score_alignment(app::Transcript& t, const seq::DateTask& task, const DateResults& results,
                       const Options& o);

// Lesson 06's curve (--baseline), if it has been written; empty if not. Read before
// training: a bad file stops the program at once, not after the training.
std::vector<seq::LengthBucket> read_baseline(const Options& o);

// Section 5: accuracy against input length beside lesson 06's, as a table, a plot and a CSV.
void compare_lengths(app::Transcript& t, const seq::DateTask& task, const DateResults& results,
                     const std::vector<seq::LengthBucket>& baseline, const Options& o);

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
std::vector<Decoded> translate(seq::Seq2SeqModel& model, const TranslationTask& task,
                               const std::vector<Words>& sources, const seq::BeamOptions& beam);

// Words of a decoded output (stops at <eos>; <unk> stays "<unk>").
Words words_of(const Vocabulary& vocabulary, const TokenIds& tokens);

// ---- translation_report.cpp --------------------------------------------------------------

struct TranslationResults {
  double greedy_bleu = 0, beam_bleu = 0;
};
// One translation as the viewer's example (docs/viewer.md): the German words as the source
// (an unknown one marked " (unk)", as the heatmaps label it), the output's labels as the
// target (seq::output_labels), its attention as the one map, its sentence BLEU beside it.
viz::AttentionExample sentence_example(const TranslationTask& task, const Words& source,
                                       const Decoded& decoded, double bleu);

// Section 6: the German-English pairs, a model trained on them, its held-out BLEU-4 (greedy
// and beam search) and the heatmaps of its best short translations (and the viewer's run
// "<out's name>/de_en").
TranslationResults translate_german(app::Transcript& t, const Options& o);

}  // namespace attend::lesson07
