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

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson05;
using attend::app::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0, "seed of every random number");
  std::string out = flag(out, "out", "output/05_scoring", "folder for summary.txt and the plots");
  // (b) entropy
  Index entropy_keys =
      flag(entropy_keys, "entropy-keys", 64, "entropy: keys per softmax", app::at_least<Index>(2));
  Index entropy_queries = flag(entropy_queries, "entropy-queries", 1000,
                               "entropy: softmaxes averaged per key size", app::at_least<Index>(1));
  Index max_size =
      flag(max_size, "max-size", 1024, "entropy: the largest key size d (d = 2, 4, 8, ...)",
           app::at_least<Index>(2));
  // (d) the matching task
  std::string score =
      flag(score, "score", "all", "matching: all, or one of dot, scaled, general, additive",
           app::one_of({"all", "dot", "scaled", "general", "additive"}));
  Index query_size =
      flag(query_size, "query-size", 16, "matching: query size Dq", app::at_least<Index>(1));
  Index key_size = flag(key_size, "key-size", 16, "matching: key size Dk", app::at_least<Index>(1));
  Index keys = flag(keys, "keys", 8, "matching: key slots per example", app::at_least<Index>(1));
  Index min_keys =
      flag(min_keys, "min-keys", 4, "matching: fewest real keys in an example (at most --keys)",
           app::at_least<Index>(1));
  double noise = flag(noise, "match-noise", 0.1,
                      "matching: standard deviation of the query's noise", app::at_least(0.0));
  bool mix =
      flag(mix, "mix", true, "matching: P random (--no-mix: P = I, q a noisy copy of its key)");
  Index hidden = flag(hidden, "hidden", 32, "matching: hidden size A of the additive score",
                      app::at_least<Index>(1));
  int steps = flag(steps, "steps", 1500, "matching: Adam steps", app::at_least(1));
  Index batch = flag(batch, "batch", 64, "matching: examples per step", app::at_least<Index>(1));
  double lr = flag(lr, "lr", 1e-2, "matching: Adam's learning rate", app::above(0.0));
  Index test_examples = flag(test_examples, "test-examples", 2000, "matching: test examples",
                             app::at_least<Index>(1));
  int eval_every = flag(eval_every, "eval-every", 100, "matching: steps between test evaluations",
                        app::at_least(1));
};

// Section 3: a query of 4 numbers against keys of 6.
constexpr Index kPitfallQuery = 4, kPitfallKey = 6, kPitfallHidden = 8;
// Section 4's heatmap: this many test examples.
constexpr Index kHeatmapExamples = 8;

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
                       {.title = fmt::format("softmax entropy over {} keys", o.entropy_keys),
                        .x_label = "log2 d (key size)",
                        .y_label = "mean entropy (nats)",
                        .y2_label = {}});
  t.say_plot_files(drawn, "entropy");
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
    const double seconds = app::seconds_since(start);
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
  const bool curves_drawn = viz::plot_curves(o.out + "/matching_accuracy.png", curves,
                                             {.title = "finding the key a query was made from",
                                              .x_label = "step",
                                              .y_label = "test accuracy (%)",
                                              .y2_label = {}});
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
  t.say_plot_files(curves_drawn, "matching_accuracy");
  t.say_plot_files(weights_drawn, "matching_weights");
}

// What the flags' ranges cannot say.
void check_options(const Options& o) {
  if (o.keys < o.min_keys) fail("need --min-keys <= --keys, got {} and {}", o.min_keys, o.keys);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "05_scoring",
          "Lesson 05: dot, scaled dot, general and additive scores, the masked softmax, why "
          "1/sqrt(d), the dimension pitfall, and a task that compares the scores "
          "(docs/05_scoring.md).");
  return app::run_program([&] {
    check_options(o);
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 05: scoring functions (seed {}, outputs in {})\n", o.seed, o.out);
    report_worked_example(t, o.seed);
    section_entropy(t, o);
    section_pitfall(t, o);
    section_matching(t, o);
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
