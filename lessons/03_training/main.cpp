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

#include "lessons/03_training/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"
// set_num_threads and num_threads; attend.h does not include this header (yet).
#include "tensor/parallel.h"

using namespace attend;
using namespace attend::lesson03;
using attend::lessons::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::string model = "both";                    // --model: mlp, cnn or both
  int epochs_mlp = 15;                           // --epochs-mlp
  int epochs_cnn = 4;                            // --epochs-cnn
  Index batch = 32;                              // --batch: pictures per step
  double lr = 2e-3;                              // --lr: the learning rate at the start
  std::string optimizer = "adam";                // --optimizer: adam or sgd
  double momentum = 0.9;                         // --momentum: SGD's
  bool cosine = true;                            // --cosine: decay it to 0 over the run
  std::uint64_t seed = 0;                        // --seed: weights, batch order, dropout
  int threads = 2;                               // --threads
  std::string data = data::kFashionMnistFolder;  // --data: folder of the IDX files
  bool synthetic = false;                        // --synthetic: the generated stand-in
  Index limit = 0;                               // --limit: training pictures (0: all 60,000)
  Index test_limit = 0;                          // --test-limit: test pictures (0: all 10,000)
  MlpConfig mlp;                                 // --mlp-hidden1, --mlp-hidden2, --mlp-dropout
  CnnConfig cnn;                                 // --cnn-channels1, --cnn-channels2, --cnn-hidden,
                                                 // --cnn-dropout
  Index overfit_batch = 16;                      // --overfit-batch: pictures in the overfit check
  int overfit_steps = 40;                        // --overfit-steps
  bool checkpoint_demo = true;                   // --checkpoint-demo / --no-checkpoint-demo
  Index resume_images = 10000;                   // --resume-images: training pictures of the demo
  std::string out = "output/03_training";        // --out
};

// The targets of the issue this lesson answers: test accuracy on real Fashion-MNIST with
// the default flags, each model trained in under two minutes on two cores.
constexpr double kMlpTarget = 0.88, kCnnTarget = 0.90, kSecondsTarget = 120;
constexpr Index kEvalBatch = 1000;        // test pictures per forward pass (no effect on results)
constexpr Index kSamplesPerClass = 8;     // pictures per class in samples.png
constexpr Index kSheetZoom = 2;           // samples.png shows every pixel as 2 x 2
constexpr Index kConfusedPairs = 5;       // confused pairs listed per model
constexpr Index kGradcheckElements = 12;  // elements of each parameter the program checks
constexpr std::int64_t kCorruptOffset = 1000;  // the byte flipped in the corrupt copy

struct ModelResult {
  ModelKind kind;
  Index parameters = 0;
  double accuracy = 0;
  double seconds = 0, cpu_seconds = 0;  // of all epochs, evaluations included
};

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

// "Shirt -> T-shirt/top" lines and per-class accuracy.
void print_confusions(Transcript& t, const Evaluation& e, const std::vector<std::string>& names) {
  std::size_t width = 0;  // of the longest class name, to line the columns up
  for (const std::string& name : names) width = std::max(width, name.size());
  t.say("Most confused (true class -> predicted class: pictures):\n");
  for (const Confusion& c : most_confused(e.confusion, kConfusedPairs))
    t.say("  {:>{}} -> {:<{}} {:>4}\n", names[static_cast<std::size_t>(c.truth)], width,
          names[static_cast<std::size_t>(c.predicted)], width, c.count);
  t.say("Accuracy per class:");
  const std::vector<double> accuracy = per_class_accuracy(e.confusion);
  for (std::size_t c = 0; c < accuracy.size(); ++c)
    t.say("{}{} {:.1f}%", c % 5 == 0 ? "\n  " : ", ", names[c], 100 * accuracy[c]);
  t.say("\n");
}

ModelResult train_and_report(Transcript& t, ModelKind kind, const Data& d, const Options& o) {
  const std::string name = model_name(kind);
  const std::string file = o.out + "/" + (kind == ModelKind::kMlp ? "mlp" : "cnn");
  TrainOptions train{.epochs = kind == ModelKind::kMlp ? o.epochs_mlp : o.epochs_cnn,
                     .batch_size = o.batch,
                     .optimizer = o.optimizer == "sgd" ? OptimizerKind::kSgd : OptimizerKind::kAdam,
                     .learning_rate = o.lr,
                     .cosine = o.cosine,
                     .momentum = o.momentum,
                     .seed = o.seed,
                     .eval_batch_size = kEvalBatch};
  t.heading(fmt::format("{}. Training the {}", kind == ModelKind::kMlp ? 3 : 4, name));
  Generator init(stream_seed(o.seed, kInitStream));
  std::unique_ptr<Classifier> model = make_model(kind, {o.mlp, o.cnn}, init);
  const std::string optimizer = train.optimizer == OptimizerKind::kAdam
                                    ? "Adam"
                                    : fmt::format("SGD with momentum {}", train.momentum);
  t.say("{} parameters; {} epochs of {} training pictures in batches of {};\n{}, lr {}{}.\n",
        model->parameter_count(), train.epochs, d.train.size(), train.batch_size, optimizer,
        train.learning_rate, train.cosine ? " falling to 0 along half a cosine" : " (constant)");
  t.say("After every epoch: the loss and accuracy on the {} test pictures.\n", d.test.size());

  viz::CsvLog log(file + "_metrics.csv",
                  {"epoch", "train_loss", "test_loss", "test_accuracy", "seconds", "cpu_seconds"});
  viz::Series train_loss{"training loss"}, test_loss{"test loss"};
  viz::Series test_accuracy{"test accuracy (%)", {}, {}, true};
  auto after_epoch = [&](const EpochResult& r) {
    t.say(
        "  epoch {:2d}: training loss {:.4f}, test loss {:.4f}, test accuracy {:.2f}%  ({:.1f} "
        "s)\n",
        r.epoch, r.train_loss, r.test.loss, 100 * r.test.accuracy, r.seconds);
    std::fflush(stdout);
    log.write_values(
        {double(r.epoch), r.train_loss, r.test.loss, r.test.accuracy, r.seconds, r.cpu_seconds});
    train_loss.add(r.epoch, r.train_loss);
    test_loss.add(r.epoch, r.test.loss);
    test_accuracy.add(r.epoch, 100 * r.test.accuracy);
  };
  const std::vector<EpochResult> epochs = train_model(*model, d, train, after_epoch);

  ModelResult result{kind, model->parameter_count(), epochs.back().test.accuracy};
  for (const EpochResult& r : epochs) {
    result.seconds += r.seconds;
    result.cpu_seconds += r.cpu_seconds;
  }
  t.say(
      "{}: test accuracy {:.2f}% after {} epoch{}, {:.1f} s of training and evaluation\n"
      "({:.1f} s of processor time on {} threads).\n",
      name, 100 * result.accuracy, epochs.size(), epochs.size() == 1 ? "" : "s", result.seconds,
      result.cpu_seconds, num_threads());

  const bool curves =
      viz::plot_curves(file + "_curves.png", {train_loss, test_loss, test_accuracy},
                       {.title = name + " on " + (o.synthetic ? "the stand-in" : "Fashion-MNIST"),
                        .x_label = "epoch",
                        .y_label = "cross-entropy loss",
                        .y2_label = "test accuracy (%)"});
  const bool confusion = viz::plot_confusion_matrix(
      file + "_confusion.png", epochs.back().test.confusion, d.test.class_names,
      fmt::format("{}: {:.2f}% of {} test pictures right", name, 100 * result.accuracy,
                  d.test.size()));
  print_confusions(t, epochs.back().test, d.test.class_names);
  nn::save_checkpoint(file + ".ckpt", *model);
  t.say("Wrote {0}_metrics.csv, {0}_curves.{1}, {0}_confusion.{2} and {0}.ckpt (the weights).\n",
        file, curves ? "png" : "txt (no gnuplot: no PNG)",
        confusion ? "png" : "txt (no gnuplot: no PNG)");
  return result;
}

void section_checkpoints(Transcript& t, const Data& d, const Options& o) {
  t.heading("5. Checkpoints: stop, save, load, continue");
  const Index images =
      o.resume_images > 0 ? std::min(o.resume_images, d.train.size()) : d.train.size();
  data::LabelledImages subset;
  subset.images = slice(d.train.images, 0, 0, images);
  subset.labels = slice(d.train.labels, 0, 0, images);
  subset.class_names = d.train.class_names;
  ResumeOptions resume{
      .epochs_before = 1,
      .epochs_after = 1,
      .train = {.batch_size = o.batch, .learning_rate = o.lr, .cosine = o.cosine, .seed = o.seed},
      .mlp = o.mlp};
  const std::string path = o.out + "/resume.ckpt";
  t.say(
      "The MLP on the first {} training pictures, 2 epochs, three ways: straight through;\n"
      "stopped after epoch 1 and saved to {}; and a fresh model, Adam and DataLoader\n"
      "(built from other seeds) loaded from that file and continued.\n",
      images, path);
  const ResumeResult r = resume_demo(subset, resume, path);
  t.say("The checkpoint: {} bytes, saved after step {}.\n", r.checkpoint_bytes, r.steps_before);

  const std::vector<double> after(r.uninterrupted.begin() + r.steps_before, r.uninterrupted.end());
  t.say("\n{:>6}  {:>22}  {:>22}  {:>22}\n", "step", "uninterrupted", "resumed from the file",
        "resumed, fresh Adam");
  const std::size_t n = after.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= 3 && i + 2 < n) {
      if (i == 3) t.say("{:>6}\n", "...");
      continue;
    }
    t.say("{:>6}  {:>22.17g}  {:>22.17g}  {:>22.17g}\n", r.steps_before + Index(i), after[i],
          r.resumed[i], r.without_optimizer[i]);
  }
  const Comparison same = compare_losses(after, r.resumed);
  const Comparison fresh = compare_losses(after, r.without_optimizer);
  t.say(
      "Resumed from the file: {} of {} losses bitwise equal (largest difference {:.3g}); final\n"
      "parameters bitwise equal: {}.\n",
      same.equal, same.total, same.max_difference, r.parameters_equal ? "yes" : "no");
  t.say("Resumed without Adam's state: {} of {} equal, largest difference {:.3g}.\n", fresh.equal,
        fresh.total, fresh.max_difference);

  const std::string copy = o.out + "/resume_corrupt.ckpt";
  t.say("\nOne byte changed (byte {} of a copy, every bit flipped), then loaded:\n  {}\n",
        kCorruptOffset, load_corrupted_copy(path, copy, kCorruptOffset, o.mlp));
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

void check_options(const Options& o) {
  if (o.model != "mlp" && o.model != "cnn" && o.model != "both")
    fail("--model must be mlp, cnn or both, got '{}'", o.model);
  if (o.epochs_mlp < 1 || o.epochs_cnn < 1)
    fail("--epochs-mlp and --epochs-cnn must be at least 1");
  if (o.batch < 1) fail("--batch must be at least 1, got {}", o.batch);
  if (!(o.lr > 0)) fail("--lr must be positive, got {}", o.lr);
  if (o.optimizer != "adam" && o.optimizer != "sgd")
    fail("--optimizer must be adam or sgd, got '{}'", o.optimizer);
  if (!(o.momentum >= 0 && o.momentum < 1))
    fail("--momentum must be in [0, 1), got {}", o.momentum);
  if (o.threads < 1) fail("--threads must be at least 1, got {}", o.threads);
  if (o.limit < 0 || o.test_limit < 0 || o.resume_images < 0)
    fail("--limit, --test-limit and --resume-images must be >= 0 (0: all)");
  if (o.mlp.hidden1 < 1 || o.mlp.hidden2 < 1 || o.cnn.channels1 < 1 || o.cnn.channels2 < 1 ||
      o.cnn.hidden < 1)
    fail("--mlp-hidden1/2, --cnn-channels1/2 and --cnn-hidden must be at least 1");
  if (!(o.mlp.dropout >= 0 && o.mlp.dropout < 1) || !(o.cnn.dropout >= 0 && o.cnn.dropout < 1))
    fail("--mlp-dropout and --cnn-dropout must be in [0, 1)");
  if (o.overfit_steps < 1) fail("--overfit-steps must be at least 1, got {}", o.overfit_steps);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lessons::CommandLine cli("03_training",
                           "Lesson 03: an MLP and a small CNN trained on Fashion-MNIST, with loss "
                           "curves, confusion matrices and checkpoints (docs/03_training.md).");
  cli.add("model", o.model, "which models to train: mlp, cnn or both");
  cli.add("epochs-mlp", o.epochs_mlp, "epochs of the MLP");
  cli.add("epochs-cnn", o.epochs_cnn, "epochs of the CNN");
  cli.add("batch", o.batch, "pictures per training step");
  cli.add("lr", o.lr, "learning rate at the start (Adam's or SGD's)");
  cli.add("optimizer", o.optimizer, "adam, or sgd (with --momentum)");
  cli.add("momentum", o.momentum, "SGD's momentum");
  cli.add("cosine", o.cosine,
          "decay the learning rate along half a cosine to 0 (--no-cosine: constant)");
  cli.add("seed", o.seed, "seed of the weights, the batch order and dropout");
  cli.add("threads", o.threads, "threads for the matrix products and convolutions");
  cli.add("data", o.data, "folder with Fashion-MNIST's IDX files");
  cli.add("synthetic", o.synthetic, "use the generated stand-in instead of Fashion-MNIST");
  cli.add("limit", o.limit, "training pictures to use (0: all 60,000)");
  cli.add("test-limit", o.test_limit, "test pictures to use (0: all 10,000)");
  cli.add("mlp-hidden1", o.mlp.hidden1, "units in the MLP's first hidden layer");
  cli.add("mlp-hidden2", o.mlp.hidden2, "units in the MLP's second hidden layer");
  cli.add("mlp-dropout", o.mlp.dropout, "dropout probability in the MLP");
  cli.add("cnn-channels1", o.cnn.channels1, "feature maps of the CNN's first convolution");
  cli.add("cnn-channels2", o.cnn.channels2, "feature maps of the CNN's second convolution");
  cli.add("cnn-hidden", o.cnn.hidden, "units in the CNN's hidden linear layer");
  cli.add("cnn-dropout", o.cnn.dropout, "dropout probability in the CNN");
  cli.add("overfit-batch", o.overfit_batch, "pictures in the overfit-one-batch check");
  cli.add("overfit-steps", o.overfit_steps, "steps of the overfit-one-batch check");
  cli.add("checkpoint-demo", o.checkpoint_demo, "run section 5 (stop, save, load, continue)");
  cli.add("resume-images", o.resume_images, "training pictures of section 5 (0: all)");
  cli.add("out", o.out, "folder for summary.txt, logs, plots and checkpoints");
  cli.parse(argc, argv);

  return lessons::run_lesson([&] {
    check_options(o);
    set_num_threads(o.threads);
    lessons::make_output_folder(o.out);
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
    for (ModelKind kind : chosen_models(o)) results.push_back(train_and_report(t, kind, d, o));
    if (o.checkpoint_demo) section_checkpoints(t, d, o);
    section_summary(t, results, o);
    t.say("\nWrote {}/summary.txt\n", o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
