// Lesson 03: training. Run it and read docs/03_training.md next to it:
//
//   ./build/bin/03_training                         # both models, seed 0, into output/03_training
//   ./build/bin/03_training --model mlp             # only the MLP
//   ./build/bin/03_training --synthetic --limit 2000   # without Fashion-MNIST, in seconds
//   ./build/bin/03_training --help                  # the flags
//
// The sections follow the chapter: the data, the models and two checks before training,
// training the MLP, training the CNN, checkpoints, and a summary with the targets.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

#include "attend.h"
#include "lesson.h"
#include "program.h"

using namespace attend;
using namespace attend::lesson03;
using attend::app::Transcript;

namespace {

// The targets of the issue this lesson answers: test accuracy on real Fashion-MNIST with
// the default flags, each model trained in under two minutes on two cores.
constexpr double kMlpTarget = 0.88, kCnnTarget = 0.90, kSecondsTarget = 120;
constexpr Index kSamplesPerClass = 8;     // pictures per class in samples.png
constexpr Index kSheetZoom = 2;           // samples.png shows every pixel as 2 x 2
constexpr Index kGradcheckElements = 12;  // elements of each parameter the program checks

// The 1-minute load average from /proc/loadavg (Linux): how many programs wanted a
// processor, on average. Above the number of cores, they waited for each other. -1 if unknown.
double load_average() {
  std::ifstream file("/proc/loadavg");
  double load = -1;
  file >> load;
  return file ? load : -1;
}

void section_data(Transcript& t, const Data& d, const Options& o) {
  t.heading("1. The data");
  t.say("Source: {}\n", d.source);
  t.say("training pictures {} {}, labels {} {}; test pictures {}\n", d.train.images.shape(),
        dtype_name(d.train.images.dtype()), d.train.labels.shape(),
        dtype_name(d.train.labels.dtype()), d.test.images.shape());
  const std::vector<Index> train_counts = class_counts(d.train), test_counts = class_counts(d.test);
  t.say("{:>3}  {:<20} {:>8} {:>8}\n", "", "class", "train", "test");
  for (Index c = 0; c < kClasses; ++c)
    t.say("{:>3}  {:<20} {:>8} {:>8}\n", c, d.train.class_names[static_cast<std::size_t>(c)],
          train_counts[static_cast<std::size_t>(c)], test_counts[static_cast<std::size_t>(c)]);
  const NDArray sheet = sample_sheet(d.train, kSamplesPerClass);
  viz::write_png(o.out + "/samples.png", viz::resize_bilinear(sheet, kSheetZoom * sheet.size(1),
                                                              kSheetZoom * sheet.size(2)));
  t.say("Wrote {}/samples.png: the first {} training pictures of each class, one row per class.\n",
        o.out, kSamplesPerClass);
}

std::vector<ModelKind> chosen_models(const Options& o) {
  if (o.model == "mlp") return {ModelKind::kMlp};
  if (o.model == "cnn") return {ModelKind::kCnn};
  return {ModelKind::kMlp, ModelKind::kCnn};
}

void section_checks(Transcript& t, const Data& d, const Options& o) {
  t.heading("2. The models, and two checks before training");
  const ModelConfigs configs{o.mlp, o.cnn};
  for (ModelKind kind : chosen_models(o)) {
    Generator init(stream_seed(o.seed, kInitStream));
    t.say("{}:\n{}", model_name(kind), make_model(kind, configs, init)->summary());
  }
  t.say(
      "\ngradcheck of small versions of the models (same layers, fewer units), float64,\n"
      "in training mode with a fixed dropout mask, {} elements of every parameter:\n",
      kGradcheckElements);
  for (ModelKind kind : chosen_models(o))
    t.say("  {}: {}\n", model_name(kind), gradcheck_model(kind, o.seed, kGradcheckElements).report);

  t.say("\nOverfitting one batch: {} training pictures, {} steps of Adam (lr {}), nothing else.\n",
        o.overfit_batch, o.overfit_steps, o.lr);
  for (ModelKind kind : chosen_models(o)) {
    OverfitResult r =
        overfit_one_batch(kind, configs, d.train, o.overfit_batch, o.overfit_steps, o.lr, o.seed);
    t.say(
        "  {}: loss {:.4f} at the first step, {:.2e} after the last; {:.0f}% of the batch right\n",
        model_name(kind), r.losses.front(), r.final_loss, 100 * r.final_accuracy);
  }
  t.say("A first loss near ln 10 = {:.4f} is a model that guesses evenly among 10 classes.\n",
        std::log(10.0));
}

void section_summary(Transcript& t, const std::vector<ModelResult>& results, const Options& o) {
  t.heading("6. Summary");
  const bool full_data = !o.synthetic && o.limit == 0 && o.test_limit == 0;
  t.say("{:<5} {:>10} {:>14} {:>9} {:>12}   {}\n", "model", "parameters", "test accuracy",
        "seconds", "CPU seconds", "target");
  for (const ModelResult& r : results) {
    const double target = r.kind == ModelKind::kMlp ? kMlpTarget : kCnnTarget;
    std::string verdict = "(the targets are for all of Fashion-MNIST)";
    if (full_data)
      verdict = fmt::format("accuracy >= {:.0f}%: {}; time < {:.0f} s: {}", 100 * target,
                            r.accuracy >= target ? "met" : "NOT met", kSecondsTarget,
                            r.seconds < kSecondsTarget ? "met" : "NOT met");
    t.say("{:<5} {:>10} {:>13.2f}% {:>9.1f} {:>12.1f}   {}\n", model_name(r.kind), r.parameters,
          100 * r.accuracy, r.seconds, r.cpu_seconds, verdict);
  }
  t.say("{} threads; the seconds include the evaluation after every epoch.\n", num_threads());
  const double load = load_average();
  const unsigned cores = std::thread::hardware_concurrency();
  if (load > cores)
    t.say(
        "Load average (1 minute) now: {:.2f} on {} cores: other programs were competing for the\n"
        "processors, so the wall-clock seconds are longer than this run alone would take.\n",
        load, cores);
  else if (load >= 0)
    t.say("Load average (1 minute) now: {:.2f} on {} cores.\n", load, cores);
}

// What the flags' ranges cannot say: two probabilities that must stay below 1.
void check_options(const Options& o) {
  if (!(o.momentum < 1)) fail("--momentum must be below 1, got {}", o.momentum);
  if (!(o.mlp.dropout < 1) || !(o.cnn.dropout < 1))
    fail("--mlp-dropout and --cnn-dropout must be below 1");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "03_training",
          "Lesson 03: an MLP and a small CNN trained on Fashion-MNIST, with loss curves, "
          "confusion matrices and checkpoints (docs/03_training.md).");
  return app::run_program([&] {
    check_options(o);
    set_num_threads(o.threads);
    app::make_output_folder(o.out);
    Transcript t;
    t.say("Lesson 03: training (seed {}, {} threads, outputs in {})\n", o.seed, num_threads(),
          o.out);
    const Data d = load_data({.folder = o.data,
                              .train_limit = o.limit,
                              .test_limit = o.test_limit,
                              .synthetic = o.synthetic,
                              .seed = o.seed});
    section_data(t, d, o);
    section_checks(t, d, o);
    std::vector<ModelResult> results;
    for (ModelKind kind : chosen_models(o)) results.push_back(section_training(t, kind, d, o));
    if (o.checkpoint_demo) section_checkpoints(t, d, o);
    section_summary(t, results, o);
    t.say("\nWrote {}/summary.txt\n", o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
