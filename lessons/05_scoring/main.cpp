// Lesson 05: scoring functions. Run it and read docs/05_scoring.md next to it:
//
//   ./build/bin/05_scoring                 # seed 0, into output/05_scoring
//   ./build/bin/05_scoring --help          # the flags
//   ./build/bin/05_scoring --score general # train only one score in section 4
//
// Four sections, as in the chapter: the four scores and the masked softmax on a worked
// example, the entropy of softmax with and without 1/sqrt(d), the dimension pitfall, and a
// small task that the scores have to learn.
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>

#include "lessons/05_scoring/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"

using namespace attend;
using namespace attend::lesson05;
using attend::lessons::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::uint64_t seed = 0;                 // --seed
  std::string out = "output/05_scoring";  // --out
  // (b) entropy
  Index entropy_keys = 64;       // --entropy-keys: keys per softmax
  Index entropy_queries = 1000;  // --entropy-queries: softmaxes averaged per size
  Index max_size = 1024;         // --max-size: d = 2, 4, ..., max_size
  // (d) the matching task
  std::string score = "all";   // --score: all, dot, scaled, general or additive
  Index query_size = 16;       // --query-size
  Index key_size = 16;         // --key-size
  Index keys = 8;              // --keys: slots per example
  Index min_keys = 4;          // --min-keys: fewest real keys
  double noise = 0.1;          // --match-noise
  bool mix = true;             // --mix: queries in other coordinates than keys (P random)
  Index hidden = 32;           // --hidden: the additive score's hidden size A
  int steps = 1500;            // --steps
  Index batch = 64;            // --batch
  double lr = 1e-2;            // --lr: Adam
  Index test_examples = 2000;  // --test-examples
  int eval_every = 100;        // --eval-every
};

// Section 1's additive score: its hidden size (its weights come from the seed).
constexpr Index kWorkedHidden = 4;
// Section 3: a query of 4 numbers against keys of 6.
constexpr Index kPitfallQuery = 4, kPitfallKey = 6, kPitfallHidden = 8;
// Section 4's heatmap: this many test examples.
constexpr Index kHeatmapExamples = 8;

// Says which files a plot wrote: the PNG needs gnuplot, the .txt data file is always there.
void report_plot(Transcript& t, bool drawn, const std::string& name) {
  if (drawn)
    t.say("Wrote {0}.png and its data, {0}.txt.\n", name);
  else
    t.say("Wrote {}.txt (no gnuplot: no PNG; apt-get install gnuplot-nox).\n", name);
}

viz::CurveOptions curve_options(const std::string& title, const std::string& x_label,
                                const std::string& y_label) {
  viz::CurveOptions options;
  options.title = title;
  options.x_label = x_label;
  options.y_label = y_label;
  return options;
}

std::string row_text(const NDArray& m, Index b, Index q, int digits = 3) {
  std::vector<std::string> cells;
  for (Index k = 0; k < m.size(2); ++k)
    cells.push_back(fmt::format("{:.{}f}", m.at({b, q, k}), digits));
  return fmt::format("[{}]", fmt::join(cells, ", "));
}

// ---- 1. The scores on a worked example -----------------------------------------------------

void section_worked_example(Transcript& t, const Options& o) {
  t.heading("1. Four scores and the masked softmax, on numbers you can check");
  WorkedExample e = worked_example();
  t.say(
      "queries q0 = (1, 0, 1), q1 = (0, 2, 0); keys k0 = (1, 1, 0), k1 = (0, 1, 1),\n"
      "k2 = (2, 0, 0), k3 = (1, 1, 1); mask (1, 1, 1, 0): k3 is padding.\n\n");
  Generator gen(o.seed);
  for (ScoreKind kind : all_scores()) {
    Scorer scorer(kind, 3, 3, kWorkedHidden, gen);
    scorer.to(kFloat64);
    if (kind == ScoreKind::kGeneral) set_worked_general_weights(scorer);
    NoGradGuard no_graph;
    NDArray s = scorer.forward(e.queries, e.keys).data();
    const char* formula = kind == ScoreKind::kDot         ? "q . k"
                          : kind == ScoreKind::kScaledDot ? "q . k / sqrt(3)"
                          : kind == ScoreKind::kGeneral   ? "q^T W k, W = diag(1, 2, -1)"
                                                          : "v^T tanh(W q + U k + b), A = 4";
    t.say("{:<9} {:<30} q0: {}\n{:<40} q1: {}\n", score_name(kind), formula, row_text(s, 0, 0), "",
          row_text(s, 0, 1));
  }

  NoGradGuard no_graph;
  Tensor scores = nn::dot_score(e.queries, e.keys);
  nn::Attended plain = nn::attend(scores, e.values);
  nn::Attended masked = nn::attend(scores, e.values, e.mask);
  NDArray w = masked.weights.data();
  t.say("\nsoftmax of the dot scores, no mask:  q0: {}\n", row_text(plain.weights.data(), 0, 0, 4));
  t.say("masked softmax:                      q0: {}\n", row_text(w, 0, 0, 4));
  t.say("                                     q1: {}\n", row_text(w, 0, 1, 4));
  t.say("weight of the padding k3: {} and {} (== 0.0: {}); row sums {:.15f} and {:.15f}\n",
        w.at({0, 0, 3}), w.at({0, 1, 3}), w.at({0, 0, 3}) == 0.0 && w.at({0, 1, 3}) == 0.0,
        w.at({0, 0, 0}) + w.at({0, 0, 1}) + w.at({0, 0, 2}) + w.at({0, 0, 3}),
        w.at({0, 1, 0}) + w.at({0, 1, 1}) + w.at({0, 1, 2}) + w.at({0, 1, 3}));
  t.say("context of q0 (values v0..v2 = (1,0), (0,1), (1,1), padding v3 = (50,50)):\n");
  t.say("  without the mask ({:.4f}, {:.4f}): the padding leaks in; with it ({:.4f}, {:.4f})\n",
        plain.context.data().at({0, 0, 0}), plain.context.data().at({0, 0, 1}),
        masked.context.data().at({0, 0, 0}), masked.context.data().at({0, 0, 1}));
  NDArray none = nn::masked_softmax(scores, tensor({0, 0, 0, 0}, {1, 4}, kFloat64)).data();
  t.say("a row whose keys are all masked gets all zeros, not NaN: {}\n", row_text(none, 0, 0, 1));
}

// ---- 2. Entropy against d ------------------------------------------------------------------

void section_entropy(Transcript& t, const Options& o) {
  t.heading("2. Why divide by sqrt(d): the entropy of softmax(q . k)");
  const double most = std::log(static_cast<double>(o.entropy_keys));
  t.say(
      "q, k ~ N(0, I_d); each of {} queries against its own {} keys. Entropy in nats; the\n"
      "maximum, equal weights, is log {} = {:.4f}. top: the mean largest weight. slope: the\n"
      "mean trace of the softmax's Jacobian, 1 - sum p^2 ({:.4f} for equal weights, 0 for\n"
      "one-hot): how much gradient flows back through it.\n\n",
      o.entropy_queries, o.entropy_keys, o.entropy_keys, most,
      1 - 1 / static_cast<double>(o.entropy_keys));
  t.say("{:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "d", "std q.k", "scaled",
        "H q.k", "scaled", "top q.k", "scaled", "slope", "scaled");
  Generator gen(o.seed);
  viz::Series unscaled{"softmax(q . k)"}, scaled{"softmax(q . k / sqrt(d))"},
      maximum{fmt::format("maximum log {}", o.entropy_keys)};
  for (Index d = 2; d <= o.max_size; d *= 2) {
    EntropyPoint p = entropy_at(d, o.entropy_keys, o.entropy_queries, gen);
    t.say("{:>5} {:>8.3f} {:>8.3f} {:>8.4f} {:>8.4f} {:>8.3f} {:>8.3f} {:>8.4f} {:>8.4f}\n", d,
          p.unscaled_std, p.scaled_std, p.unscaled, p.scaled, p.unscaled_top, p.scaled_top,
          p.unscaled_slope, p.scaled_slope);
    const double x = std::log2(static_cast<double>(d));
    unscaled.add(x, p.unscaled);
    scaled.add(x, p.scaled);
    maximum.add(x, most);
  }
  const bool drawn =
      viz::plot_curves(o.out + "/entropy.png", {unscaled, scaled, maximum},
                       curve_options(fmt::format("softmax entropy over {} keys", o.entropy_keys),
                                     "log2 d (key size)", "mean entropy (nats)"));
  report_plot(t, drawn, "entropy");
}

// ---- 3. The dimension pitfall --------------------------------------------------------------

void section_pitfall(Transcript& t, const Options& o) {
  t.heading("3. The dimension pitfall: queries of size 4, keys of size 6");
  Generator gen(o.seed);
  PitfallDemo demo = dimension_pitfall(kPitfallQuery, kPitfallKey, kPitfallHidden, gen);
  t.say("dot_score says:\n  {}\n", demo.dot_error);
  t.say("general  q^T W k, W [4, 6]:               scores {}, {} parameters\n", demo.general_scores,
        demo.general_parameters);
  t.say("additive v^T tanh(W q + U k + b), A = {}:  scores {}, {} parameters\n", kPitfallHidden,
        demo.additive_scores, demo.additive_parameters);
}

// ---- 4. A task the scores must learn -------------------------------------------------------

std::vector<ScoreKind> scores_to_train(const Options& o) {
  if (o.score == "all") return all_scores();
  return {parse_score(o.score)};
}

void section_matching(Transcript& t, const Options& o) {
  t.heading("4. Learning to find the key a query was made from");
  MatchingTask task{.max_keys = o.keys,
                    .min_keys = o.min_keys,
                    .query_size = o.query_size,
                    .key_size = o.key_size,
                    .noise = o.noise,
                    .mixed = o.mix};
  Generator gen(o.seed);
  NDArray mixing = make_mixing_matrix(task, gen);
  MatchingBatch test = draw_matching_batch(task, mixing, o.test_examples, gen);
  t.say(
      "q = P k_target + {} * N(0, I), P {} [{}, {}] matrix; {} to {} real keys per\n"
      "example in {} slots (the rest padding). Adam, lr {}, {} steps of {} fresh examples;\n"
      "accuracy on {} test examples (chance, a random real key: {:.1f}%).\n\n",
      o.noise, o.mix ? "a fixed random" : "the identity", o.query_size, o.key_size, o.min_keys,
      o.keys, o.keys, o.lr, o.steps, o.batch, o.test_examples, 100 * chance_accuracy(test));
  MatchingTraining training{
      .steps = o.steps, .batch = o.batch, .lr = o.lr, .eval_every = o.eval_every};
  std::vector<viz::Series> curves;
  std::vector<viz::HeatmapPanel> panels;
  MatchingBatch shown = draw_matching_batch(task, mixing, kHeatmapExamples, gen);
  t.say("{:<9} {:>10} {:>10} {:>16} {:>12} {:>8}\n", "score", "parameters", "accuracy",
        "weight on target", "final loss", "seconds");
  for (ScoreKind kind : scores_to_train(o)) {
    const bool needs_equal_sizes = kind == ScoreKind::kDot || kind == ScoreKind::kScaledDot;
    if (needs_equal_sizes && o.query_size != o.key_size && o.score == "all") {
      t.say("{:<9} skipped: query size {} and key size {} differ (see section 3)\n",
            score_name(kind), o.query_size, o.key_size);
      continue;
    }
    Generator init(o.seed + 1);
    Scorer scorer(kind, o.query_size, o.key_size, o.hidden, init);
    Generator data_gen(o.seed + 2);  // every score sees the same training examples
    const auto start = std::chrono::steady_clock::now();
    MatchingCurve curve = train_matching(scorer, task, mixing, test, training, data_gen);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    t.say("{:<9} {:>10} {:>9.1f}% {:>16.3f} {:>12} {:>8.1f}\n", score_name(kind),
          scorer.parameter_count(), 100 * curve.accuracies.back(), mean_target_weight(scorer, test),
          curve.losses.empty() ? std::string("-") : fmt::format("{:.4f}", curve.losses.back()),
          seconds);
    viz::Series series{score_name(kind)};
    for (std::size_t i = 0; i < curve.steps.size(); ++i)
      series.add(curve.steps[i], 100 * curve.accuracies[i]);
    curves.push_back(series);
    NoGradGuard no_graph;
    NDArray weights = nn::masked_softmax(scorer.forward(shown.queries, shown.keys), shown.mask)
                          .data()
                          .reshape({kHeatmapExamples, o.keys});
    panels.push_back({score_name(kind), weights});
  }
  if (curves.empty()) fail("section 4: no score could be trained");
  const bool curves_drawn = viz::plot_curves(
      o.out + "/matching_accuracy.png", curves,
      curve_options("finding the key a query was made from", "step", "test accuracy (%)"));
  std::vector<std::string> targets;
  for (Index b = 0; b < kHeatmapExamples; ++b)
    targets.push_back(fmt::format("key {} of {}", shown.targets.data().at({b}),
                                  sum(shown.mask.data(), 1).at({b})));
  viz::PanelOptions panel;
  panel.heatmap.title = "attention weights of 8 test examples (padding slots get exactly 0)";
  panel.heatmap.x_label = "key slot";
  panel.heatmap.y_label = "example";
  panel.heatmap.row_labels = targets;
  panel.heatmap.value_label = "weight";
  panel.heatmap.min_value = 0;
  panel.heatmap.max_value = 1;
  const bool weights_drawn =
      viz::plot_heatmap_panel(o.out + "/matching_weights.png", panels, panel);
  t.say(
      "(accuracy: the highest-scoring real key is the target. weight on target: the mean\n"
      "attention weight it gets.)\n");
  report_plot(t, curves_drawn, "matching_accuracy");
  report_plot(t, weights_drawn, "matching_weights");
}

void check_options(const Options& o) {
  if (o.entropy_keys < 2) fail("--entropy-keys must be at least 2, got {}", o.entropy_keys);
  if (o.entropy_queries < 1)
    fail("--entropy-queries must be at least 1, got {}", o.entropy_queries);
  if (o.max_size < 2) fail("--max-size must be at least 2, got {}", o.max_size);
  if (o.score != "all") parse_score(o.score);
  if (o.query_size < 1 || o.key_size < 1 || o.hidden < 1)
    fail("--query-size, --key-size and --hidden must be at least 1");
  if (o.min_keys < 1 || o.keys < o.min_keys)
    fail("need 1 <= --min-keys <= --keys, got {} and {}", o.min_keys, o.keys);
  if (o.steps < 1) fail("--steps must be at least 1, got {}", o.steps);
  if (o.batch < 1 || o.test_examples < 1 || o.eval_every < 1)
    fail("--batch, --test-examples and --eval-every must be at least 1");
  if (!(o.lr > 0)) fail("--lr must be positive, got {}", o.lr);
  if (!(o.noise >= 0)) fail("--match-noise must be >= 0, got {}", o.noise);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lessons::CommandLine cli("05_scoring",
                           "Lesson 05: dot, scaled dot, general and additive scores, the masked "
                           "softmax, why 1/sqrt(d), the dimension pitfall, and a task that "
                           "compares the scores (docs/05_scoring.md).");
  cli.add("seed", o.seed, "seed of every random number");
  cli.add("out", o.out, "folder for summary.txt and the plots");
  cli.add("entropy-keys", o.entropy_keys, "entropy: keys per softmax");
  cli.add("entropy-queries", o.entropy_queries, "entropy: softmaxes averaged per key size");
  cli.add("max-size", o.max_size, "entropy: the largest key size d (d = 2, 4, 8, ...)");
  cli.add("score", o.score, "matching: all, or one of dot, scaled, general, additive");
  cli.add("query-size", o.query_size, "matching: query size Dq");
  cli.add("key-size", o.key_size, "matching: key size Dk");
  cli.add("keys", o.keys, "matching: key slots per example");
  cli.add("min-keys", o.min_keys, "matching: fewest real keys in an example");
  cli.add("match-noise", o.noise, "matching: standard deviation of the query's noise");
  cli.add("mix", o.mix, "matching: P random (--no-mix: P = I, q a noisy copy of its key)");
  cli.add("hidden", o.hidden, "matching: hidden size A of the additive score");
  cli.add("steps", o.steps, "matching: Adam steps");
  cli.add("batch", o.batch, "matching: examples per step");
  cli.add("lr", o.lr, "matching: Adam's learning rate");
  cli.add("test-examples", o.test_examples, "matching: test examples");
  cli.add("eval-every", o.eval_every, "matching: steps between test evaluations");
  cli.parse(argc, argv);

  return lessons::run_lesson([&] {
    check_options(o);
    lessons::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 05: scoring functions (seed {}, outputs in {})\n", o.seed, o.out);
    section_worked_example(t, o);
    section_entropy(t, o);
    section_pitfall(t, o);
    section_matching(t, o);
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
