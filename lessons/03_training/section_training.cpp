// Sections 3 and 4 of the program: one model trained, every epoch reported, its curves,
// confusion matrix and checkpoint written.
#include <algorithm>
#include <cstdio>

#include "program.h"

namespace attend::lesson03 {
namespace {

// Test pictures per forward pass. The predictions do not depend on it; the test loss is summed
// per batch, so its 8th digit does. At 1000 the CNN's evaluation took the program's peak
// memory from 307 to 448 MB (one epoch, /usr/bin/time's maximum resident size).
constexpr Index kEvalBatch = 250;
constexpr Index kConfusedPairs = 5;  // confused pairs listed per model

// "Shirt -> T-shirt/top" lines and per-class accuracy.
void print_confusions(app::Transcript& t, const Evaluation& e,
                      const std::vector<std::string>& names) {
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

}  // namespace

ModelResult section_training(app::Transcript& t, ModelKind kind, const Data& d, const Options& o) {
  const std::string name = model_name(kind);
  const std::string file = o.out + "/" + (kind == ModelKind::kMlp ? "mlp" : "cnn");
  TrainOptions train{.epochs = kind == ModelKind::kMlp ? o.epochs_mlp : o.epochs_cnn,
                     .batch_size = o.batch,
                     .optimizer = o.optimizer == "sgd" ? OptimizerKind::kSgd : OptimizerKind::kAdam,
                     .learning_rate = o.lr,
                     .cosine = o.cosine,
                     .momentum = o.momentum,
                     .seed = o.seed,
                     .eval_batch_size = kEvalBatch,
                     .progress = o.progress};
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

}  // namespace attend::lesson03
