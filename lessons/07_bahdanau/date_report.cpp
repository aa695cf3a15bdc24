// Sections 2 to 5 of the program: RNNsearch trained on dates, scored on the held-out dates
// (exact match, greedy and beam search), where its attention looks, and its accuracy against
// input length beside lesson 06's.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>

#include "lesson.h"

namespace attend::lesson07 {
namespace {

constexpr std::size_t kBeamOneChecks = 50;  // dates compared under beam width 1 and greedy
// Date heatmaps: the first test date of each of these formats (nn/data/dates.h numbering).
constexpr std::array<int, 4> kHeatmapFormats = {0, 7, 10, 1};

// The attention of the first test date of each format, as data for the interactive viewer
// (docs/viewer.md). Returns the viewer page's path.
std::string write_viewer_data(const seq::DateTask& task, const DateResults& results,
                              const Options& o) {
  viz::AttentionRun run{
      .lesson = "07_bahdanau",
      .title = "RNNsearch's attention over the input of decoded test dates",
      .kind = "sequence",
      .seed = o.seed,
      .flags = fmt::format("--score {} --hidden {} --epochs {}", o.score, o.hidden, o.epochs)};
  for (const std::size_t i : seq::first_date_of_each_format(task.test)) {
    const data::DateExample& date = task.test[i];
    viz::AttentionExample e =
        seq::date_attention_example(task.target_vocabulary, date, results.decoded[i]);
    e.maps.push_back({.values = viz::map_rows(interpret::attention_matrix(
                          results.decoded[i].weights, static_cast<Index>(date.input.size())))});
    run.examples.push_back(std::move(e));
  }
  return viz::write_attention_run(o.out, run).string();
}

}  // namespace

seq::TrainingResult train_and_report_dates(app::Transcript& t, seq::AttentionSeq2Seq& model,
                                           const seq::DateTask& task, const Options& o,
                                           Generator& gen) {
  t.heading("2. Training on dates");
  t.say(
      "{} training dates, Adam (lr {}), clipping at {}, batches of {} of similar length; at\n"
      "most {} epochs or {} s, stopping once validation exact match reaches {:.1f}%.\n",
      task.train.size(), o.lr, o.clip, o.batch_size, o.epochs, o.seconds, 100 * o.stop_at);
  const seq::TrainingResult r = seq::train_on_dates(model, task, o.batch_size, gen,
                                                    {.max_epochs = o.epochs,
                                                     .seconds = o.seconds,
                                                     .learning_rate = o.lr,
                                                     .clip_norm = o.clip,
                                                     .stop_at = o.stop_at,
                                                     .log_path = o.out + "/training_dates.csv",
                                                     .label = "dates",
                                                     .progress = o.progress});
  seq::report_training(t, r, o.out + "/training_dates.png", "Lesson 07: dates with attention");
  return r;
}

DateResults score_dates(app::Transcript& t, seq::AttentionSeq2Seq& model, const seq::DateTask& task,
                        const Options& o) {
  t.heading("3. Held-out dates");
  model.eval();
  DateResults r;
  const auto start = std::chrono::steady_clock::now();
  r.decoded = seq::decode_dates(model, task, task.test);
  r.predictions = seq::date_strings(task, r.decoded);
  r.exact_match = seq::exact_match(task.test, r.predictions);
  t.say("greedy: exact match {:.2f}% on the {} test dates (target >= {:.1f}%: {}) ({:.1f} s)\n",
        100 * r.exact_match, task.test.size(), 100 * kExactMatchTarget,
        r.exact_match >= kExactMatchTarget ? "met" : "NOT met", app::seconds_since(start));

  const auto beam_start = std::chrono::steady_clock::now();
  const seq::BeamComparison beam = seq::compare_beam_with_greedy(
      model, task, task.test, r.decoded, static_cast<std::size_t>(o.beam_dates),
      {.width = o.beam, .max_length = seq::kMaxDateLength, .length_penalty = o.length_penalty},
      kBeamOneChecks);
  t.say("beam width 1 gives the greedy output, token for token, on {} of {} dates\n",
        beam.width_one_same, beam.width_one_checked);
  if (beam.dates > 0)
    t.say("first {} dates: greedy {:.1f}%, beam width {} {:.1f}% ({:.1f} s)\n", beam.dates,
          100 * beam.greedy_exact_match, o.beam, 100 * beam.beam_exact_match,
          app::seconds_since(beam_start));
  for (std::size_t i = 0; i < task.test.size(); ++i)
    if (r.predictions[i] != task.test[i].output)
      t.say("  wrong: {:>30} -> {} (true {})\n", '"' + task.test[i].input + '"', r.predictions[i],
            task.test[i].output);
  return r;
}

double score_alignment(app::Transcript& t, const seq::DateTask& task, const DateResults& results,
                       const Options& o) {
  t.heading("4. Does attention look where the digits come from?");
  std::vector<std::vector<std::vector<double>>> weights;
  for (const seq::Decoded& d : results.decoded) weights.push_back(d.weights);
  const interpret::AlignmentScore all = interpret::alignment_accuracy(task.test, weights);
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
    std::vector<data::DateExample> only = task.test;
    for (data::DateExample& e : only)
      for (std::size_t k = 0; k < e.source.size(); ++k)
        if (k != i) e.source[k] = data::Span{};
    t.say(" {:5.1f}", 100 * interpret::alignment_accuracy(only, weights).accuracy());
  }
  t.say("  (%)\n");

  for (int format : kHeatmapFormats) {
    const auto it = std::find_if(task.test.begin(), task.test.end(),
                                 [&](const data::DateExample& e) { return e.format == format; });
    if (it == task.test.end()) continue;
    const std::size_t i = static_cast<std::size_t>(it - task.test.begin());
    const std::vector<std::string> rows =
        seq::output_labels(task.target_vocabulary, results.decoded[i]);
    const std::string png = fmt::format("{}/attention_date_format{}.png", o.out, format);
    viz::plot_attention(png,
                        interpret::attention_matrix(results.decoded[i].weights,
                                                    static_cast<Index>(it->input.size())),
                        rows, seq::character_labels(it->input),
                        fmt::format("\"{}\" -> {}", it->input, results.predictions[i]));
    t.say("Wrote {} (\"{}\", format {}; '_' is a space).\n", png, it->input, format);
  }
  t.say("Wrote {}/attention.json (one test date per format); to explore it, open {}.\n", o.out,
        write_viewer_data(task, results, o));
  return all.accuracy();
}

std::vector<seq::LengthBucket> read_baseline(const Options& o) {
  if (!std::filesystem::exists(o.baseline)) return {};
  return seq::read_length_curve(o.baseline);
}

void compare_lengths(app::Transcript& t, const seq::DateTask& task, const DateResults& results,
                     const std::vector<seq::LengthBucket>& baseline, const Options& o) {
  t.heading("5. Accuracy against input length, with and without attention");
  const std::vector<seq::LengthBucket> ours =
      seq::accuracy_by_length(task.test, results.predictions);
  if (baseline.empty())
    t.say(
        "There is no {}: run ./build/bin/06_seq2seq first (with the same --seed and\n"
        "--test-dates) to draw lesson 06's curve here too. Only this lesson's curve follows.\n",
        o.baseline);
  viz::Series with{"with attention (lesson 07)"}, without{"without attention (lesson 06)"};
  t.say("  {:>12} {:>6} {:>15} {:>18}\n", "input length", "dates", "with attention",
        "without (lesson 06)");
  for (const seq::LengthBucket& b : ours) {
    with.add(seq::bucket_middle(b), b.accuracy());
    const auto other = std::find_if(baseline.begin(), baseline.end(), [&](const auto& a) {
      return a.low == b.low && a.high == b.high;
    });
    t.say("  {:>5} to {:>2} {:>6} {:>14.1f}% {:>17}\n", b.low, b.high, b.count, 100 * b.accuracy(),
          other == baseline.end() ? "-" : fmt::format("{:.1f}%", 100 * other->accuracy()));
  }
  for (const seq::LengthBucket& b : baseline) without.add(seq::bucket_middle(b), b.accuracy());
  std::vector<viz::Series> curves = {with};
  if (!baseline.empty()) curves.push_back(without);
  viz::plot_curves(o.out + "/accuracy_by_length.png", curves,
                   {.title = "Exact match against input length (held-out dates)",
                    .x_label = "input length (characters, middle of the bucket)",
                    .y_label = "exact match",
                    .y2_label = "",
                    .y_min = 0,
                    .y_max = 1.05});
  seq::write_length_curve(o.out + "/accuracy_by_length.csv", ours);
  t.say("Wrote {0}/accuracy_by_length.png and .csv.\n", o.out);
}

}  // namespace attend::lesson07
