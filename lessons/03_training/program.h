// Lesson 03's program: its flags, and the sections main.cpp runs that have files of their own
// (section_training.cpp, section_checkpoints.cpp).
#pragma once

#include <string>
#include <vector>

#include "attend.h"
#include "lesson.h"

namespace attend::lesson03 {

// Every hyper-parameter, each with the flag that changes it.
struct Options : app::Flags {
  std::string model = flag(model, "model", "both", "which models to train: mlp, cnn or both",
                           app::one_of({"mlp", "cnn", "both"}));
  int epochs_mlp = flag(epochs_mlp, "epochs-mlp", 15, "epochs of the MLP", app::at_least(1));
  int epochs_cnn = flag(epochs_cnn, "epochs-cnn", 4, "epochs of the CNN", app::at_least(1));
  Index batch = flag(batch, "batch", 32, "pictures per training step", app::at_least<Index>(1));
  double lr = flag(lr, "lr", 2e-3, "learning rate at the start (Adam's or SGD's)", app::above(0.0));
  std::string optimizer = flag(optimizer, "optimizer", "adam", "adam, or sgd (with --momentum)",
                               app::one_of({"adam", "sgd"}));
  double momentum = flag(momentum, "momentum", 0.9, "SGD's momentum", app::between(0.0, 1.0));
  bool cosine = flag(cosine, "cosine", true,
                     "decay the learning rate along half a cosine to 0 (--no-cosine: constant)");
  std::uint64_t seed = flag(seed, "seed", 0, "seed of the weights, the batch order and dropout");
  int threads = flag(threads, "threads", 2, "threads for the matrix products and convolutions",
                     app::between(1, kMaxThreads));
  std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
  bool synthetic =
      flag(synthetic, "synthetic", false, "use the generated stand-in instead of Fashion-MNIST");
  Index limit =
      flag(limit, "limit", 0, "training pictures to use (0: all 60,000)", app::at_least<Index>(0));
  Index test_limit = flag(test_limit, "test-limit", 0, "test pictures to use (0: all 10,000)",
                          app::at_least<Index>(0));
  MlpConfig mlp{.hidden1 = flag(mlp.hidden1, "mlp-hidden1", MlpConfig{}.hidden1,
                                "units in the MLP's first hidden layer", app::at_least<Index>(1)),
                .hidden2 = flag(mlp.hidden2, "mlp-hidden2", MlpConfig{}.hidden2,
                                "units in the MLP's second hidden layer", app::at_least<Index>(1)),
                .dropout = flag(mlp.dropout, "mlp-dropout", MlpConfig{}.dropout,
                                "dropout probability in the MLP", app::between(0.0, 1.0))};
  CnnConfig cnn{
      .channels1 = flag(cnn.channels1, "cnn-channels1", CnnConfig{}.channels1,
                        "feature maps of the CNN's first convolution", app::at_least<Index>(1)),
      .channels2 = flag(cnn.channels2, "cnn-channels2", CnnConfig{}.channels2,
                        "feature maps of the CNN's second convolution", app::at_least<Index>(1)),
      .hidden = flag(cnn.hidden, "cnn-hidden", CnnConfig{}.hidden,
                     "units in the CNN's hidden linear layer", app::at_least<Index>(1)),
      .dropout = flag(cnn.dropout, "cnn-dropout", CnnConfig{}.dropout,
                      "dropout probability in the CNN", app::between(0.0, 1.0))};
  Index overfit_batch = flag(overfit_batch, "overfit-batch", 16,
                             "pictures in the overfit-one-batch check", app::at_least<Index>(1));
  int overfit_steps = flag(overfit_steps, "overfit-steps", 40,
                           "steps of the overfit-one-batch check", app::at_least(1));
  bool checkpoint_demo =
      flag(checkpoint_demo, "checkpoint-demo", true, "run section 5 (stop, save, load, continue)");
  Index resume_images = flag(resume_images, "resume-images", 10000,
                             "training pictures of section 5 (0: all)", app::at_least<Index>(0));
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
  std::string out =
      flag(out, "out", "output/03_training", "folder for summary.txt, logs, plots and checkpoints");
};

struct ModelResult {
  ModelKind kind;
  Index parameters = 0;
  double accuracy = 0;
  double seconds = 0, cpu_seconds = 0;  // of all epochs, evaluations included
};

// Sections 3 and 4 (section_training.cpp): trains one model, reports every epoch, writes its
// curves, confusion matrix and checkpoint.
ModelResult section_training(app::Transcript& t, ModelKind kind, const Data& d, const Options& o);

// Section 5 (section_checkpoints.cpp): stop, save, load, continue, and a corrupted file.
void section_checkpoints(app::Transcript& t, const Data& d, const Options& o);

}  // namespace attend::lesson03
