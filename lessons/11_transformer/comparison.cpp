// Sections 5 and 6 of the program: lesson 07's RNNsearch trained in the same run on the same
// dates, beside the Transformer; and the ablations, each the default model with one flag
// changed.
#include <fmt/format.h>

#include <functional>

#include "lesson.h"

namespace attend::lesson11 {
namespace {

// Lesson 07's default sizes and learning rate (lessons/07_bahdanau/lesson.h).
constexpr Index kEmbedding = 16, kHidden = 64, kAttention = 32, kMaxout = 16;
constexpr double kLesson07Lr = 5e-3;

std::string percent(double share) {
  return fmt::format("{:.1f}%", 100 * share);
}

std::string training_time(const seq::TrainingResult& r) {
  return r.reached_target ? fmt::format("{:.1f} s", r.seconds)
                          : fmt::format("not in {:.0f} s", r.seconds);
}

}  // namespace

ModelScores train_bahdanau(app::Transcript& t, const seq::DateTask& task, const Options& o) {
  t.heading("5. Beside lesson 07's RNNsearch");
  t.say(
      "Lesson 07's model with its default sizes (m {}, n {}, n' {}, l {}, additive score, maxout\n"
      "output), Adam at a constant lr {}, trained here on the same dates with the same batches,\n"
      "clipping, budget and stopping rule as the Transformer.\n",
      kEmbedding, kHidden, kAttention, kMaxout, kLesson07Lr);
  Generator gen(o.seed);
  seq::AttentionSeq2Seq model({task.source_vocabulary.size(), task.target_vocabulary.size(),
                               kEmbedding, kHidden, kAttention, kMaxout},
                              seq::Scoring::kAdditive, seq::Readout::kMaxout, gen);
  const seq::TrainingResult r = seq::train_on_dates(model, task, o.batch_size, gen,
                                                    {.max_epochs = o.epochs,
                                                     .seconds = o.seconds,
                                                     .learning_rate = kLesson07Lr,
                                                     .clip_norm = o.clip,
                                                     .stop_at = o.stop_at,
                                                     .log_path = o.out + "/training_rnnsearch.csv",
                                                     .label = "dates (RNNsearch)",
                                                     .progress = o.progress});
  t.say("RNNsearch: {} steps, {} epochs, {:.1f} s ({}).\n", r.steps, r.epochs, r.seconds,
        r.reached_target ? "reached the validation target" : "did not reach the target");
  ModelScores s = decode_test_dates(model, task);
  s.name = "RNNsearch (lesson 07)";
  s.training = r;
  std::vector<std::vector<std::vector<double>>> weights;
  for (const Decoded& d : s.decoded) weights.push_back(d.weights);
  s.alignment = interpret::alignment_accuracy(task.test, weights).accuracy();
  return s;
}

void compare_models(app::Transcript& t, const ModelScores& a, const ModelScores& b) {
  t.say("\n  {:24} {:>10} {:>16} {:>11} {:>10} {:>15}\n", "model", "parameters", "training time",
        "exact match", "alignment", "decode ms/date");
  for (const ModelScores* s : {&a, &b})
    t.say("  {:24} {:>10} {:>16} {:>11} {:>10} {:>15.3f}\n", s->name, s->parameters,
          training_time(s->training), percent(s->exact_match), percent(s->alignment), s->decode_ms);
  t.say(
      "Training time: until the validation exact match reached the --stop-at target, on this\n"
      "machine in this run (the validation decoding after each epoch included). Alignment: the\n"
      "attention decoding reports (RNNsearch's only one; the Transformer's last-layer average;\n"
      "its best head: {} at {}). Decoding: greedy, batches of 250, with the cache.\n",
      a.best_head, percent(a.best_head_alignment));
}

void run_ablations(app::Transcript& t, const seq::DateTask& task, const Options& o) {
  t.heading("6. Ablations: one flag changed at a time");
  struct Ablation {
    std::string flags;
    std::function<void(Options&)> change;
  };
  const std::vector<Ablation> ablations = {
      {"(the default model)", [](Options&) {}},
      {"--positions none", [](Options& a) { a.positions = "none"; }},
      {"--positions learned", [](Options& a) { a.positions = "learned"; }},
      {"--heads 1", [](Options& a) { a.heads = 1; }},
      {o.norm_first ? "--no-norm-first" : "--norm-first",
       [](Options& a) { a.norm_first = !a.norm_first; }},
      {"--schedule constant", [](Options& a) { a.schedule = "constant"; }},
      {"--schedule warmup", [](Options& a) { a.schedule = "warmup"; }},
  };
  t.say(
      "Each row trains the model of this run's flags with one flag changed, for {} epochs\n"
      "(--ablation-epochs; at most {} s each), with the same seed, and scores it on the test\n"
      "dates.\n\n",
      o.ablation_epochs, o.ablation_seconds);
  t.say("  {:22} {:>10} {:>7} {:>16} {:>11} {:>13} {:>12}\n", "flags", "parameters", "epochs",
        "training time", "exact match", "best head", "last layer");
  for (const Ablation& ablation : ablations) {
    Options a = o;
    a.seconds = o.ablation_seconds;
    a.epochs = o.ablation_epochs;
    ablation.change(a);
    Generator gen(a.seed);
    seq::TransformerSeq2Seq model(transformer_sizes(task, a), gen);
    const seq::TrainingResult r = train_transformer(t, model, task, a, gen, "", false);
    ModelScores s = decode_test_dates(model, task);
    best_head(alignment_table(task, cross_attention_of(model, task, s.decoded)), s);
    t.say("  {:22} {:>10} {:>7} {:>16} {:>11} {:>13} {:>12}\n", ablation.flags, s.parameters,
          r.epochs, training_time(r), percent(s.exact_match), percent(s.best_head_alignment),
          percent(s.alignment));
  }
  t.say(
      "Best head: the alignment accuracy of the best single head; last layer: its heads'\n"
      "average. Training time: until validation exact match reached {:.1f}%.\n",
      100 * o.stop_at);
}

}  // namespace attend::lesson11
