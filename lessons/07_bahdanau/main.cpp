// Lesson 07: Bahdanau attention. Run it and read docs/07_bahdanau.md next to it:
//
//   ./build/bin/06_seq2seq                 # first, for the curve without attention
//   ./build/bin/07_bahdanau                # seed 0, into output/07_bahdanau
//   ./build/bin/07_bahdanau --help         # the flags
//
// The decoder no longer gets one vector c for the whole input: at every output step it
// scores every input position against its previous state, and reads a weighted average of
// the encoder's annotations. The program trains it on the dates of lesson 06, measures
// whether it looks at the right characters, compares its accuracy against input length with
// lesson 06's, and then translates German sentences into English.
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "lessons/07_bahdanau/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"

using namespace attend;
using namespace attend::lesson07;
using attend::lessons::Transcript;
using lesson06::DateTask;
using lesson06::TrainingResult;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::uint64_t seed = 0;                // --seed: data and initial weights
  std::int64_t train_dates = 10000;      // --train-dates
  std::int64_t validation_dates = 1000;  // --validation-dates: early stopping
  std::int64_t test_dates = 1000;        // --test-dates: the held-out dates of every score
  std::int64_t batch_size = 64;          // --batch
  int epochs = 8;                        // --epochs: at most this many passes over the dates
  double seconds = 90;             // --seconds: time budget of the date training (a safety net)
  double lr = 5e-3;                // --lr: Adam's learning rate
  double clip = 1.0;               // --clip: global gradient norm
  double stop_at = 0.998;          // --stop-at: validation exact match that ends training
  std::int64_t embedding = 16;     // --embedding: m
  std::int64_t hidden = 64;        // --hidden: n, per encoder direction and decoder
  std::int64_t attention = 32;     // --attention: n', the alignment model's hidden layer
  std::string score = "additive";  // --score: additive or general
  std::string readout = "maxout";  // --readout: maxout (the paper's deep output) or linear
  std::int64_t maxout = 16;        // --maxout: l, maxout units of the deep output (dates)
  std::int64_t beam = 5;           // --beam: beam width
  double length_penalty = 1.0;     // --length-penalty: beam ranking log p / length^a
  std::int64_t beam_dates = 200;   // --beam-dates: test dates decoded by beam search
  std::string baseline = "output/06_seq2seq/accuracy_by_length.csv";  // --baseline
  bool de_en = true;                       // --de-en / --no-de-en: the German-English part
  int de_en_epochs = 4;                    // --de-en-epochs: passes over the sentence pairs
  double de_en_seconds = 60;               // --de-en-seconds: time budget (a safety net)
  std::int64_t de_en_embedding = 32;       // --de-en-embedding
  std::int64_t de_en_hidden = 64;          // --de-en-hidden
  std::int64_t de_en_attention = 32;       // --de-en-attention
  std::int64_t de_en_maxout = 64;          // --de-en-maxout
  int min_count = 2;                       // --min-count: rarer words become <unk>
  std::int64_t de_en_test = 500;           // --de-en-test: held-out sentence pairs
  std::int64_t de_en_validation = 200;     // --de-en-validation
  std::int64_t de_en_max_pairs = 0;        // --de-en-max-pairs: use only this many pairs (0: all)
  std::string out = "output/07_bahdanau";  // --out
};

// Date heatmaps: the first test date of each of these formats (lesson06 numbering).
constexpr std::array<int, 4> kHeatmapFormats = {0, 7, 10, 1};
constexpr std::size_t kSentenceHeatmaps = 4;
constexpr std::size_t kHeatmapWords = 8;
constexpr std::size_t kBeamOneChecks = 50;  // dates compared under beam width 1 and greedy
constexpr double kExactMatchTarget = 0.995, kAlignmentTarget = 0.90;
constexpr Index kMaxTranslationLength = 30;  // words, <eos> included

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ModelSizes date_sizes(const DateTask& task, const Options& o) {
  return {task.source_vocabulary.size(),
          task.target_vocabulary.size(),
          o.embedding,
          o.hidden,
          o.attention,
          o.maxout};
}

void section_model(Transcript& t, AttentionSeq2Seq& model, const Options& o) {
  t.heading("1. RNNsearch: a decoder that attends");
  t.say("annotations  h_j = [h_fwd_j; h_bwd_j]  (bidirectional GRU, n = {} each way)      eq. 7\n",
        o.hidden);
  t.say("start        s_0 = tanh(W_s h_bwd_1)                                      A.2.2\n");
  t.say("score        e_ij = {}                eq. 6, A.1.2\n",
        model.scoring() == Scoring::kAdditive
            ? "v^T tanh(W s_(i-1) + U h_j)  (n' = " + std::to_string(o.attention) + ")"
            : "s_(i-1)^T W h_j  (general)             ");
  t.say("weights      alpha_ij = softmax_j(e_ij) over the real input positions         eq. 6\n");
  t.say("context      c_i = sum_j alpha_ij h_j                                         eq. 5\n");
  if (model.readout_kind() == Readout::kMaxout)
    t.say(
        "output       t~_i = U_o s_(i-1) + V_o E y_(i-1) + C_o c_i   ({} units)     A.2.2\n"
        "             t_i = maxout(t~_i) ({} units), p(y_i | y_<i, x) = softmax(W_o t_i)   eq. 4\n",
        2 * o.maxout, o.maxout);
  else
    t.say("output       p(y_i | y_<i, x) = softmax(W_o [s_i; c_i; E y_(i-1)] + b_o)      eq. 4\n");
  t.say("state        s_i = GRU([E y_(i-1); c_i], s_(i-1))                             A.2.2\n");
  t.say("{}", model.summary());

  // The whole model in float64 at tiny sizes: its gradient, and its attention weights.
  Generator gen(o.seed);
  AttentionSeq2Seq tiny({.source_vocabulary = 8,
                         .target_vocabulary = 8,
                         .embedding = 3,
                         .hidden = 4,
                         .attention = 5,
                         .maxout = 3},
                        model.scoring(), model.readout_kind(), gen);
  tiny.to(kFloat64);
  const Batch batch = lesson06::tiny_batch(8);
  t.say(
      "\ngradcheck of the whole model at vocab 8, m = 3, n = 4, n' = 5, l = 3, on 2 padded "
      "sentences:\n"
      "  {}\n",
      lesson06::gradcheck_model(tiny, batch).report);
  const lesson06::AttentionInvariants inv =
      lesson06::check_attention(lesson06::teacher_forced(tiny, batch).weights, batch.source_mask);
  t.say(
      "its attention: {} rows, largest |sum_j alpha_ij - 1| = {:.1e}; {} padded positions,\n"
      "largest weight there = {} (exactly 0: exp(-inf))\n",
      inv.rows, inv.largest_row_sum_error, inv.masked_positions, inv.largest_masked_weight);
}

TrainingResult section_training(Transcript& t, AttentionSeq2Seq& model, const DateTask& task,
                                const Options& o, Generator& gen) {
  t.heading("2. Training on dates");
  t.say(
      "{} training dates, Adam (lr {}), clipping at {}, batches of {} of similar length; at\n"
      "most {} epochs or {} s, stopping once validation exact match reaches {:.1f}%.\n",
      task.train.size(), o.lr, o.clip, o.batch_size, o.epochs, o.seconds, 100 * o.stop_at);
  std::vector<Index> lengths;
  for (const DateExample& e : task.train) lengths.push_back(static_cast<Index>(e.input.size()));
  auto batches = [&] {
    std::vector<Batch> out;
    for (const auto& rows : lesson06::length_sorted_batches(lengths, o.batch_size, gen))
      out.push_back(lesson06::date_batch(task, task.train, rows));
    return out;
  };
  auto validate = [&] {
    return lesson06::exact_match(task.validation,
                                 lesson06::predict_dates(model, task, task.validation));
  };
  const TrainingResult r = lesson06::train(model, batches, validate,
                                           {.max_epochs = o.epochs,
                                            .seconds = o.seconds,
                                            .learning_rate = o.lr,
                                            .clip_norm = o.clip,
                                            .stop_at = o.stop_at,
                                            .log_path = o.out + "/training_dates.csv",
                                            .label = "dates"});
  lesson06::report_date_training(t, r, o.out + "/training_dates.png",
                                 "Lesson 07: dates with attention");
  return r;
}

// Greedy outputs of the test dates, as strings, with their attention.
struct DateResults {
  std::vector<Decoded> decoded;
  std::vector<std::string> predictions;
  double exact_match = 0;
};

DateResults section_exact_match(Transcript& t, AttentionSeq2Seq& model, const DateTask& task,
                                const Options& o) {
  t.heading("3. Held-out dates");
  model.eval();
  DateResults r;
  const auto start = std::chrono::steady_clock::now();
  r.decoded = decode_dates(model, task, task.test);
  for (const Decoded& d : r.decoded)
    r.predictions.push_back(task.target_vocabulary.decode_characters(d.tokens));
  r.exact_match = lesson06::exact_match(task.test, r.predictions);
  t.say("greedy: exact match {:.2f}% on the {} test dates (target >= {:.1f}%: {}) ({:.1f} s)\n",
        100 * r.exact_match, task.test.size(), 100 * kExactMatchTarget,
        r.exact_match >= kExactMatchTarget ? "met" : "NOT met", seconds_since(start));

  const std::size_t n = std::min(task.test.size(), static_cast<std::size_t>(o.beam_dates));
  std::vector<std::string> beamed;
  std::size_t same = 0, checked = 0;
  const auto beam_start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    const Batch one = lesson06::date_batch(task, task.test, {i});
    const Decoded d = lesson06::beam_search(
        model, one.source, one.source_mask,
        {.width = o.beam, .max_length = 12, .length_penalty = o.length_penalty});
    beamed.push_back(task.target_vocabulary.decode_characters(d.tokens));
    if (i < kBeamOneChecks) {
      const Decoded narrow =
          lesson06::beam_search(model, one.source, one.source_mask, {.width = 1, .max_length = 12});
      same += narrow.tokens == r.decoded[i].tokens;
      ++checked;
    }
  }
  t.say("beam width 1 gives the greedy output, token for token, on {} of {} dates\n", same,
        checked);
  if (n > 0) {
    const std::vector<DateExample> subset(task.test.begin(),
                                          task.test.begin() + static_cast<std::ptrdiff_t>(n));
    const std::vector<std::string> greedy(r.predictions.begin(),
                                          r.predictions.begin() + static_cast<std::ptrdiff_t>(n));
    t.say("first {} dates: greedy {:.1f}%, beam width {} {:.1f}% ({:.1f} s)\n", n,
          100 * lesson06::exact_match(subset, greedy), o.beam,
          100 * lesson06::exact_match(subset, beamed), seconds_since(beam_start));
  }
  for (std::size_t i = 0; i < task.test.size(); ++i)
    if (r.predictions[i] != task.test[i].output)
      t.say("  wrong: {:>30} -> {} (true {})\n", '"' + task.test[i].input + '"', r.predictions[i],
            task.test[i].output);
  return r;
}

double section_alignment(Transcript& t, const DateTask& task, const DateResults& results,
                         const Options& o) {
  t.heading("4. Does attention look where the digits come from?");
  std::vector<std::vector<std::vector<double>>> weights;
  for (const Decoded& d : results.decoded) weights.push_back(d.weights);
  const AlignmentScore all = alignment_accuracy(task.test, weights);
  t.say(
      "alignment accuracy: for {} of {} output digits ({:.1f}%), the most-attended input\n"
      "character lies inside the year, month or day the digit comes from (target >= {:.0f}%: "
      "{})\n",
      all.hits, all.digits, 100 * all.accuracy(), 100 * kAlignmentTarget,
      all.accuracy() >= kAlignmentTarget ? "met" : "NOT met");
  t.say("by output position (y y y y - m m - d d):\n ");
  for (std::size_t i = 0; i < 10; ++i) {
    if (i == 4 || i == 7) {
      t.say("     -");
      continue;
    }
    // Only position i: blank out the others' spans in a copy of the examples.
    std::vector<DateExample> only = task.test;
    for (DateExample& e : only)
      for (std::size_t k = 0; k < e.source.size(); ++k)
        if (k != i) e.source[k] = data::Span{};
    t.say(" {:5.1f}", 100 * alignment_accuracy(only, weights).accuracy());
  }
  t.say("  (%)\n");

  for (int format : kHeatmapFormats) {
    const auto it = std::find_if(task.test.begin(), task.test.end(),
                                 [&](const DateExample& e) { return e.format == format; });
    if (it == task.test.end()) continue;
    const std::size_t i = static_cast<std::size_t>(it - task.test.begin());
    const std::vector<std::string> rows = output_labels(task.target_vocabulary, results.decoded[i]);
    const std::string png = fmt::format("{}/attention_date_format{}.png", o.out, format);
    viz::plot_attention(png,
                        attention_matrix(results.decoded[i], static_cast<Index>(it->input.size())),
                        rows, character_labels(it->input),
                        fmt::format("\"{}\" -> {}", it->input, results.predictions[i]));
    t.say("Wrote {} (\"{}\", format {}; '_' is a space).\n", png, it->input, format);
  }
  return all.accuracy();
}

// Lesson 06's curve, if it has been written (read before training: a bad file stops the
// program at once, not after the training).
std::vector<lesson06::LengthBucket> read_baseline(const Options& o) {
  if (!std::filesystem::exists(o.baseline)) return {};
  return lesson06::read_length_curve(o.baseline);
}

void section_length(Transcript& t, const DateTask& task, const DateResults& results,
                    const std::vector<lesson06::LengthBucket>& baseline, const Options& o) {
  t.heading("5. Accuracy against input length, with and without attention");
  const std::vector<lesson06::LengthBucket> ours =
      lesson06::accuracy_by_length(task.test, results.predictions);
  if (baseline.empty())
    t.say(
        "There is no {}: run ./build/bin/06_seq2seq first (with the same --seed and\n"
        "--test-dates) to draw lesson 06's curve here too. Only this lesson's curve follows.\n",
        o.baseline);
  viz::Series with{"with attention (lesson 07)"}, without{"without attention (lesson 06)"};
  t.say("  {:>12} {:>6} {:>15} {:>18}\n", "input length", "dates", "with attention",
        "without (lesson 06)");
  for (const lesson06::LengthBucket& b : ours) {
    with.add(lesson06::bucket_middle(b), b.accuracy());
    const auto other = std::find_if(baseline.begin(), baseline.end(), [&](const auto& a) {
      return a.low == b.low && a.high == b.high;
    });
    t.say("  {:>5} to {:>2} {:>6} {:>14.1f}% {:>17}\n", b.low, b.high, b.count, 100 * b.accuracy(),
          other == baseline.end() ? "-" : fmt::format("{:.1f}%", 100 * other->accuracy()));
  }
  for (const lesson06::LengthBucket& b : baseline)
    without.add(lesson06::bucket_middle(b), b.accuracy());
  std::vector<viz::Series> curves = {with};
  if (!baseline.empty()) curves.push_back(without);
  viz::plot_curves(o.out + "/accuracy_by_length.png", curves,
                   {.title = "Exact match against input length (held-out dates)",
                    .x_label = "input length (characters, middle of the bucket)",
                    .y_label = "exact match",
                    .y2_label = "",
                    .y_min = 0,
                    .y_max = 1.05});
  lesson06::write_length_curve(o.out + "/accuracy_by_length.csv", ours);
  t.say("Wrote {0}/accuracy_by_length.png and .csv.\n", o.out);
}

// ---- German-English ----

struct TranslationResults {
  double greedy_bleu = 0, beam_bleu = 0;
};

std::vector<Words> words_of_all(const TranslationTask& task, const std::vector<Decoded>& decoded) {
  std::vector<Words> out;
  for (const Decoded& d : decoded) out.push_back(words_of(task.target_vocabulary, d.tokens));
  return out;
}

void say_bleu(Transcript& t, const std::string& name, const Bleu& b) {
  t.say(
      "  {:<16} BLEU-4 {:5.2f}   p1..p4 {:.3f} {:.3f} {:.3f} {:.3f}   BP {:.3f} (c = {}, r = {})\n",
      name, 100 * b.score, b.precisions[0], b.precisions[1], b.precisions[2], b.precisions[3],
      b.brevity_penalty, b.candidate_length, b.reference_length);
}

TranslationResults section_translation(Transcript& t, const Options& o) {
  t.heading("6. German to English");
  std::vector<data::SentencePair> pairs = data::load_freedict_sentences();
  if (o.de_en_max_pairs > 0 && static_cast<std::size_t>(o.de_en_max_pairs) < pairs.size())
    pairs.resize(static_cast<std::size_t>(o.de_en_max_pairs));
  const std::size_t count = pairs.size();
  const TranslationTask task =
      make_translation_task(std::move(pairs), static_cast<std::size_t>(o.de_en_validation),
                            static_cast<std::size_t>(o.de_en_test), o.seed, o.min_count);
  t.say(
      "{} sentence pairs from the FreeDict German-English dictionary: {} to train, {} to\n"
      "validate, {} held out. Words seen at least {} times in the training part: {} German, {}\n"
      "English (with the 4 special tokens); <unk> replaces {:.1f}% of the held-out German words\n"
      "and {:.1f}% of the English ones.\n",
      count, task.train_source.size(), task.validation_source.size(), task.test_source.size(),
      o.min_count, task.source_vocabulary.size(), task.target_vocabulary.size(),
      100 * unknown_share(task.source_vocabulary, task.test_source),
      100 * unknown_share(task.target_vocabulary, task.test_target));

  Generator gen(o.seed + 1);
  AttentionSeq2Seq model({task.source_vocabulary.size(), task.target_vocabulary.size(),
                          o.de_en_embedding, o.de_en_hidden, o.de_en_attention, o.de_en_maxout},
                         parse_scoring(o.score), parse_readout(o.readout), gen);
  t.say("Model: m = {}, n = {}, n' = {}, {} parameters.\n", o.de_en_embedding, o.de_en_hidden,
        o.de_en_attention, model.parameter_count());
  std::vector<Index> lengths;
  for (const Words& s : task.train_source) lengths.push_back(static_cast<Index>(s.size()));
  auto batches = [&] {
    std::vector<Batch> out;
    for (const auto& rows : lesson06::length_sorted_batches(lengths, o.batch_size, gen))
      out.push_back(translation_batch(task, task.train_source, task.train_target, rows));
    return out;
  };
  const lesson06::BeamOptions greedy{.width = 1, .max_length = kMaxTranslationLength};
  // Validation: the loss of teacher forcing on the validation pairs after every epoch. Trained
  // longer than the default (--de-en-epochs), the model starts to learn the 7,000 training
  // pairs by heart and the validation loss rises again, so the parameters of the epoch with
  // the lowest one are kept.
  std::vector<std::size_t> all_rows(task.validation_source.size());
  for (std::size_t i = 0; i < all_rows.size(); ++i) all_rows[i] = i;
  const std::vector<Batch> validation = {
      translation_batch(task, task.validation_source, task.validation_target, all_rows)};
  std::vector<double> validation_loss;
  std::vector<NDArray> best_parameters;
  std::size_t best_epoch = 0;
  auto validate = [&] {
    const lesson06::HeldOutLoss v = lesson06::held_out_loss(model, validation);
    validation_loss.push_back(v.loss);
    if (v.loss <= *std::min_element(validation_loss.begin(), validation_loss.end())) {
      best_epoch = validation_loss.size();
      best_parameters.clear();
      for (const Tensor& p : model.parameters()) best_parameters.push_back(p.data().clone());
    }
    return v.token_accuracy;
  };
  const TrainingResult r = lesson06::train(model, batches, validate,
                                           {.max_epochs = o.de_en_epochs,
                                            .seconds = o.de_en_seconds,
                                            .learning_rate = o.lr,
                                            .clip_norm = o.clip,
                                            .stop_at = 2.0,  // never: the budget decides
                                            .log_path = o.out + "/training_de_en.csv",
                                            .label = "sentences"});
  for (int e = 0; e < r.epochs; ++e)
    t.say(
        "  epoch {:2}  train loss {:.3f}  validation loss {:.3f}  validation next-word "
        "accuracy {:.1f}%\n",
        e + 1, r.train_loss[static_cast<std::size_t>(e)],
        validation_loss[static_cast<std::size_t>(e)],
        100 * r.validation_score[static_cast<std::size_t>(e)]);
  t.say(
      "{} steps in {:.1f} s ({}). Kept the parameters of epoch {}, the lowest validation "
      "loss.\n",
      r.steps, r.seconds, r.out_of_time ? "stopped by the time budget" : "all epochs done",
      best_epoch);
  const std::vector<Tensor> parameters = model.parameters();
  for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].data() = best_parameters[i];

  model.eval();
  TranslationResults results;
  const std::vector<Decoded> greedy_out = translate(model, task, task.test_source, greedy);
  const Bleu greedy_bleu = corpus_bleu(words_of_all(task, greedy_out), task.test_target);
  const auto beam_start = std::chrono::steady_clock::now();
  const std::vector<Decoded> beam_out = translate(
      model, task, task.test_source,
      {.width = o.beam, .max_length = kMaxTranslationLength, .length_penalty = o.length_penalty});
  const Bleu beam_bleu = corpus_bleu(words_of_all(task, beam_out), task.test_target);
  t.say("Held-out corpus BLEU-4 on {} sentences:\n", task.test_source.size());
  say_bleu(t, "greedy", greedy_bleu);
  say_bleu(t, fmt::format("beam width {}", o.beam), beam_bleu);
  t.say("(beam search took {:.1f} s)\n", seconds_since(beam_start));
  // The same measure on sentences the model was trained on: how much it learned by heart.
  const std::size_t seen = std::min(task.train_source.size(), task.test_source.size());
  const std::vector<Words> seen_source(
      task.train_source.begin(), task.train_source.begin() + static_cast<std::ptrdiff_t>(seen));
  const std::vector<Words> seen_target(
      task.train_target.begin(), task.train_target.begin() + static_cast<std::ptrdiff_t>(seen));
  say_bleu(
      t, "greedy, train",
      corpus_bleu(words_of_all(task, translate(model, task, seen_source, greedy)), seen_target));
  t.say("(the last line: {} training sentences, for comparison)\n", seen);
  results.greedy_bleu = greedy_bleu.score;
  results.beam_bleu = beam_bleu.score;

  // The heatmaps: the short held-out sentences (at most kHeatmapWords words) that the model
  // translates best. Where the translation is right, the alignment can be read.
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < task.test_source.size(); ++i)
    if (task.test_source[i].size() <= kHeatmapWords)
      ranked.emplace_back(
          -sentence_bleu(words_of(task.target_vocabulary, beam_out[i].tokens), task.test_target[i]),
          i);
  std::sort(ranked.begin(), ranked.end());
  t.say(
      "\nThe {} short held-out sentences (at most {} words) with the best sentence BLEU, and\n"
      "their attention (beam search):\n",
      kSentenceHeatmaps, kHeatmapWords);
  for (std::size_t k = 0; k < ranked.size() && k < kSentenceHeatmaps; ++k) {
    const std::size_t i = ranked[k].second;
    const Words& source = task.test_source[i];
    const Words output = words_of(task.target_vocabulary, beam_out[i].tokens);
    const Words rows = output_labels(task.target_vocabulary, beam_out[i]);
    Words columns;
    for (const std::string& w : source)
      columns.push_back(task.source_vocabulary.contains(w) ? w : w + " (unk)");
    const std::string png = fmt::format("{}/attention_de_en_{}.png", o.out, k + 1);
    viz::plot_attention(png, attention_matrix(beam_out[i], static_cast<Index>(source.size())), rows,
                        columns, fmt::format("{}", fmt::join(source, " ")));
    t.say("  {}\n    model:     {}\n    reference: {}   (sentence BLEU {:.1f})\n    -> {}\n",
          fmt::join(source, " "), fmt::join(output, " "), fmt::join(task.test_target[i], " "),
          -100 * ranked[k].first, png);
  }
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lessons::CommandLine cli("07_bahdanau",
                           "Lesson 07: Bahdanau attention on dates (exact match, alignment, "
                           "accuracy against length) and on German-English sentences (BLEU) "
                           "(docs/07_bahdanau.md).");
  cli.add("seed", o.seed, "seed of the data splits, the initial weights and the batch order");
  cli.add("train-dates", o.train_dates, "training dates");
  cli.add("validation-dates", o.validation_dates, "validation dates (early stopping)");
  cli.add("test-dates", o.test_dates, "held-out test dates");
  cli.add("batch", o.batch_size, "sequences per batch");
  cli.add("epochs", o.epochs, "at most this many passes over the training dates");
  cli.add("seconds", o.seconds, "time budget of the date training, in seconds");
  cli.add("lr", o.lr, "Adam's learning rate");
  cli.add("clip", o.clip, "largest global gradient norm");
  cli.add("stop-at", o.stop_at, "validation exact match (0-1) at which the date training stops");
  cli.add("embedding", o.embedding, "embedding size m (dates)");
  cli.add("hidden", o.hidden, "GRU size n, per encoder direction and decoder (dates)");
  cli.add("attention", o.attention, "hidden units n' of the additive score (dates)");
  cli.add("score", o.score, "scoring function: additive (Bahdanau) or general (Luong)");
  cli.add("readout", o.readout, "output layer: maxout (deep output, A.2.2) or linear");
  cli.add("maxout", o.maxout, "maxout units l of the deep output (dates)");
  cli.add("beam", o.beam, "beam width");
  cli.add("length-penalty", o.length_penalty, "beam ranking: log p / length^this");
  cli.add("beam-dates", o.beam_dates, "test dates decoded by beam search too");
  cli.add("baseline", o.baseline, "lesson 06's accuracy_by_length.csv, drawn for comparison");
  cli.add("de-en", o.de_en, "run the German-English part");
  cli.add("de-en-seconds", o.de_en_seconds, "time budget of the German-English training");
  cli.add("de-en-epochs", o.de_en_epochs, "at most this many German-English epochs");
  cli.add("de-en-embedding", o.de_en_embedding, "embedding size m (German-English)");
  cli.add("de-en-hidden", o.de_en_hidden, "GRU size n (German-English)");
  cli.add("de-en-attention", o.de_en_attention, "hidden units n' of the score (German-English)");
  cli.add("de-en-maxout", o.de_en_maxout, "maxout units l of the deep output (German-English)");
  cli.add("min-count", o.min_count, "words seen fewer times in training become <unk>");
  cli.add("de-en-test", o.de_en_test, "held-out German-English sentence pairs");
  cli.add("de-en-validation", o.de_en_validation, "validation sentence pairs");
  cli.add("de-en-max-pairs", o.de_en_max_pairs, "use only the first N pairs (0: all)");
  cli.add("out", o.out, "folder for summary.txt, the CSV files and the plots");
  cli.parse(argc, argv);

  return lessons::run_lesson([&] {
    if (o.train_dates < 1 || o.validation_dates < 1 || o.test_dates < 1)
      fail("--train-dates, --validation-dates and --test-dates must be at least 1");
    if (o.batch_size < 1) fail("--batch must be at least 1, got {}", o.batch_size);
    if (o.embedding < 1 || o.hidden < 1 || o.attention < 1)
      fail("--embedding, --hidden and --attention must be at least 1");
    if (o.beam < 1) fail("--beam must be at least 1, got {}", o.beam);
    if (o.beam_dates < 0) fail("--beam-dates must not be negative, got {}", o.beam_dates);
    if (o.min_count < 1) fail("--min-count must be at least 1, got {}", o.min_count);
    const Scoring scoring = parse_scoring(o.score);
    parse_readout(o.readout);  // a bad name stops here, before any work
    if (o.de_en && !data::freedict_available())
      fail(
          "the German-English sentences need the FreeDict dictionary in {} (apt-get install "
          "dict-freedict-deu-eng), or run with --no-de-en",
          data::kFreedictFolder);
    const std::vector<lesson06::LengthBucket> baseline = read_baseline(o);
    lessons::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 07: Bahdanau attention (seed {}, {} scoring, {} output layer, outputs in {})\n",
          o.seed, o.score, o.readout, o.out);
    const DateTask task = lesson06::make_date_task(static_cast<std::size_t>(o.train_dates),
                                                   static_cast<std::size_t>(o.validation_dates),
                                                   static_cast<std::size_t>(o.test_dates), o.seed);
    Generator gen(o.seed);
    AttentionSeq2Seq model(date_sizes(task, o), scoring, parse_readout(o.readout), gen);
    section_model(t, model, o);
    section_training(t, model, task, o, gen);
    const DateResults dates = section_exact_match(t, model, task, o);
    const double alignment = section_alignment(t, task, dates, o);
    section_length(t, task, dates, baseline, o);
    const double dates_seconds = seconds_since(start);
    TranslationResults de_en;
    if (o.de_en) de_en = section_translation(t, o);

    t.heading("Summary");
    t.say(
        "dates: exact match {:.2f}% (target >= {:.1f}%), alignment accuracy {:.1f}% (target >= "
        "{:.0f}%), {:.1f} s\n",
        100 * dates.exact_match, 100 * kExactMatchTarget, 100 * alignment, 100 * kAlignmentTarget,
        dates_seconds);
    if (o.de_en)
      t.say("German-English: held-out BLEU-4 {:.2f} (greedy), {:.2f} (beam width {})\n",
            100 * de_en.greedy_bleu, 100 * de_en.beam_bleu, o.beam);
    t.say("Total time {:.1f} s. Wrote {}/summary.txt.\n", seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
