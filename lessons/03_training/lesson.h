// Lesson 03: training. The functions that main.cpp runs, in the order of the chapter
// (docs/03_training.md), one file each:
//
//   data.cpp       (1) Fashion-MNIST from disk, or its generated stand-in; a sheet of
//                      samples; the seeds of the run's random generators
//   models.cpp     (2) the two models: an MLP and a small CNN, both pictures -> 10 logits
//   checks.cpp     (2) before training: gradcheck of both models in float64, and
//                      overfitting one batch
//   training.cpp   (3, 4) the training loop: one step, one epoch, evaluation with a
//                      confusion matrix, a whole run
//   resume.cpp     (5) checkpoints: a run stopped, saved, loaded into fresh objects and
//                      continued gives the same losses; what a corrupt file does
//
// The program itself: program.h (its flags) and section_training.cpp, section_checkpoints.cpp (the
// sections main.cpp runs, as they print and draw), on top of the functions here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attend.h"

namespace attend::lesson03 {

constexpr Index kImageSize = 28;  // Fashion-MNIST pictures are 28 x 28 pixels, grey
constexpr Index kClasses = 10;

// One run seed drives several generators, each seeded from (seed, stream, epoch) by
// stream_seed, so that changing one use of randomness (say, the order of the samples)
// leaves the others as they were. Distinct triples give distinct seeds, and the
// generator's seeding (splitmix64) turns neighbouring seeds into unrelated sequences.
constexpr std::uint64_t kInitStream = 0;     // the models' initial weights
constexpr std::uint64_t kShuffleStream = 1;  // the DataLoader's order of the samples
constexpr std::uint64_t kDropoutStream = 2;  // dropout masks, re-seeded every epoch
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream, int epoch = 0);

// ---- (1) data: data.cpp ---------------------------------------------------------------------

struct DataOptions {
  std::string folder = data::kFashionMnistFolder;
  Index train_limit = 0;   // 0: all 60,000 training pictures
  Index test_limit = 0;    // 0: all 10,000 test pictures
  bool synthetic = false;  // the generated stand-in instead of the files
  std::uint64_t seed = 0;  // of the stand-in
};

struct Data {
  data::LabelledImages train, test;
  std::string source;  // "Fashion-MNIST from <folder>" or "the generated stand-in"
};

// Reads Fashion-MNIST from options.folder. When the files are missing, load_fashion_mnist's
// error (which says what to install) propagates, unless options.synthetic asks for the
// generated stand-in.
Data load_data(const DataOptions& options);

// A sheet of the first `per_class` pictures of every class: one row per class, [1, H, W]
// in [0, 1], with a 2-pixel gap between pictures (for viz::write_png).
NDArray sample_sheet(const data::LabelledImages& images, Index per_class);

// How many pictures of each class.
std::vector<Index> class_counts(const data::LabelledImages& images);

// ---- (2) models: models.cpp -------------------------------------------------------------

// What both lesson models are: pictures [B, 1, 28, 28] in, logits [B, 10] out (raw scores;
// cross_entropy applies the softmax). Dropout draws its masks from the model's own
// generator, which the training loop re-seeds at the start of every epoch, so an epoch's
// masks depend only on (seed, epoch): a run resumed at an epoch boundary draws the same.
class Classifier : public nn::UnaryModule {
 public:
  Generator& dropout_generator() { return dropout_generator_; }

 private:
  Generator dropout_generator_;
};

struct MlpConfig {
  Index hidden1 = 256;   // units of the first hidden layer
  Index hidden2 = 128;   // units of the second
  double dropout = 0.2;  // probability of zeroing a hidden unit while training
};

// flatten -> linear 784->hidden1 -> relu -> dropout -> linear hidden1->hidden2 -> relu ->
// dropout -> linear hidden2->10
class Mlp : public Classifier {
 public:
  Mlp(const MlpConfig& config, Generator& init);
  Tensor forward(const Tensor& images) override;
  std::string describe() const override { return "Mlp"; }

  nn::Flatten flatten;
  nn::Linear fc1, fc2, fc3;
  nn::ReLU relu;
  nn::Dropout dropout;
};

struct CnnConfig {
  Index channels1 = 16;  // feature maps of the first convolution
  Index channels2 = 32;  // of the second
  Index hidden = 128;    // units of the hidden linear layer
  double dropout = 0;    // on the hidden units; 0: none
};

// conv 3x3 1->c1 (padding 1, keeps 28x28) -> relu -> max pool 2 (14x14) ->
// conv 3x3 c1->c2 (padding 1) -> relu -> max pool 2 (7x7) -> flatten (c2*7*7) ->
// linear -> relu -> dropout -> linear -> 10
class SmallCnn : public Classifier {
 public:
  SmallCnn(const CnnConfig& config, Generator& init);
  Tensor forward(const Tensor& images) override;
  std::string describe() const override { return "SmallCnn"; }

  nn::Conv2d conv1, conv2;
  nn::MaxPool2d pool;
  nn::ReLU relu;
  nn::Flatten flatten;
  nn::Linear fc1, fc2;
  nn::Dropout dropout;
};

enum class ModelKind { kMlp, kCnn };
std::string model_name(ModelKind kind);  // "MLP", "CNN"

struct ModelConfigs {
  MlpConfig mlp;
  CnnConfig cnn;
};
std::unique_ptr<Classifier> make_model(ModelKind kind, const ModelConfigs& configs,
                                       Generator& init);

// Exercise 1: the parameter counts, from the configs alone, by the formulas of the chapter
// (a linear layer in -> out has in*out weights and out biases; a 3x3 convolution
// c_in -> c_out has c_out*c_in*3*3 weights and c_out biases). Reference solutions.
Index mlp_parameter_count(const MlpConfig& config);
Index cnn_parameter_count(const CnnConfig& config);

// ---- (2) checks before training: checks.cpp -----------------------------------------------

// Small versions of the two models, for gradcheck (same layers, fewer units).
ModelConfigs gradcheck_configs();

// gradcheck of cross_entropy(model(x), y) with respect to every parameter of a small
// version of the model, in float64, in training mode: dropout is on, with its generator
// re-seeded before every forward pass so that each evaluation draws the same mask. x is
// two pictures of N(0, 1) noise: max pooling picks a single largest element in every
// window (ties have probability zero). `elements_per_parameter` elements of each parameter
// are checked (0: all); gradcheck's default tolerances.
GradcheckResult gradcheck_model(ModelKind kind, std::uint64_t seed, Index elements_per_parameter);

struct OverfitResult {
  std::vector<double> losses;  // the loss of every step, before its update
  double final_loss = 0;       // after the last update, in evaluation mode
  double final_accuracy = 0;   // on the batch, in evaluation mode
};

// Trains a fresh model (the configs given) with Adam on the first `batch` training pictures
// only, for `steps` steps. A model and a training loop that work drive this loss to almost
// zero: the first check to run before a long training run.
OverfitResult overfit_one_batch(ModelKind kind, const ModelConfigs& configs,
                                const data::LabelledImages& images, Index batch, int steps,
                                double learning_rate, std::uint64_t seed);

// ---- (3, 4) the training loop: training.cpp -------------------------------------------------

// One step: zero_grad, forward, loss, backward, optimizer step. Returns the loss (computed
// before the update). A loss that is inf or NaN stops it before backward() and the step,
// with an Error naming `loop` and `step` (optim::check_loss_is_finite).
double train_step(Classifier& model, optim::Optimizer& optimizer, const data::Batch& batch,
                  std::string_view loop = "train_step", Index step = 1);

// The learning rate of every step: constant, or falling from learning_rate to 0 along half
// a cosine over total_steps (optim::CosineAnnealing). Large steps early cover ground; small
// steps at the end settle into a minimum instead of bouncing around it.
optim::Schedule learning_rate_schedule(double learning_rate, bool cosine, std::int64_t total_steps);

// One pass over the loader in training mode, dropout re-seeded from (seed, epoch) first, the
// learning rate of each step from schedule(optimizer.steps_taken()). Returns the mean loss
// of its steps; appends each step's loss to step_losses and reports each step to progress,
// when they are not null.
double train_epoch(Classifier& model, optim::Optimizer& optimizer, const optim::Schedule& schedule,
                   data::DataLoader& loader, int epoch, std::uint64_t seed,
                   std::vector<double>* step_losses = nullptr, viz::Progress* progress = nullptr);

struct Evaluation {
  double loss = 0;      // mean cross-entropy
  double accuracy = 0;  // fraction of pictures whose largest logit is the true class
  NDArray confusion;    // int64 [10, 10]: confusion[true class, predicted class] = count
};

// The model in evaluation mode (no dropout) and without a graph, `batch_size` pictures at a
// time. Leaves the model in evaluation mode.
Evaluation evaluate(Classifier& model, const data::LabelledImages& images, Index batch_size);

enum class OptimizerKind { kAdam, kSgd };

// The lesson's defaults (main.cpp's flags change them).
struct TrainOptions {
  int epochs = 1;
  Index batch_size = 32;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 2e-3;  // at the start
  bool cosine = true;           // decay it along half a cosine to 0 over the run
  double momentum = 0.9;        // SGD's (exercise 2)
  std::uint64_t seed = 0;
  Index eval_batch_size = 1000;
  bool progress = true;  // the progress line on stderr (false: none)
};

struct EpochResult {
  int epoch = 0;          // from 1
  double train_loss = 0;  // mean over the epoch's steps (dropout on, weights changing)
  Evaluation test;
  double seconds = 0;      // wall-clock time of this epoch's training and evaluation
  double cpu_seconds = 0;  // processor time of all threads over the same span
};

// Adam (the default) or SGD with momentum, for the parameters.
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainOptions& options,
                                                 std::vector<Tensor> parameters);

// The optimizer, a shuffling DataLoader and `epochs` epochs, each followed by an evaluation
// on the test pictures and a call of after_epoch (for printing and logging). Returns every
// epoch.
std::vector<EpochResult> train_model(Classifier& model, const Data& data,
                                     const TrainOptions& options,
                                     const std::function<void(const EpochResult&)>& after_epoch);

// A confused pair: `count` pictures of class `truth` were predicted as `predicted`.
struct Confusion {
  Index truth = 0, predicted = 0, count = 0;
};
// The `top` largest off-diagonal cells, largest first (ties: lower truth, then predicted).
std::vector<Confusion> most_confused(const NDArray& confusion, Index top);
// Accuracy of each class: the diagonal over the row sums (0 for a class with no pictures).
std::vector<double> per_class_accuracy(const NDArray& confusion);

// ---- (5) checkpoints: resume.cpp --------------------------------------------------------

struct ResumeOptions {
  int epochs_before = 1;  // epochs before the checkpoint
  int epochs_after = 1;   // epochs after it
  TrainOptions train;     // batch size, learning rate, schedule, seed (always Adam)
  MlpConfig mlp;
};

struct ResumeResult {
  std::vector<double> uninterrupted;      // every step's loss of the run that never stopped
  std::vector<double> resumed;            // the steps after the checkpoint, resumed from it
  std::vector<double> without_optimizer;  // the same steps, resumed with a fresh Adam
  Index steps_before = 0;                 // steps done when the checkpoint was saved
  bool parameters_equal = false;          // the two runs end with bitwise equal parameters
  std::uintmax_t checkpoint_bytes = 0;
};

// Trains the MLP on `train` three ways, each with train_epoch: straight through; stopped
// after epochs_before, saved to checkpoint_path (model, Adam, step, the DataLoader's
// generator) and continued in a fresh model, optimizer and loader loaded from the file;
// and continued from the same file with the model alone and a fresh Adam.
ResumeResult resume_demo(const data::LabelledImages& train, const ResumeOptions& options,
                         const std::string& checkpoint_path);

// How many losses of the two lists are bitwise equal, position by position (a length
// difference counts as unequal), and the largest absolute difference.
struct Comparison {
  Index equal = 0, total = 0;
  double max_difference = 0;
};
Comparison compare_losses(const std::vector<double>& a, const std::vector<double>& b);

// Copies the checkpoint to copy_path, flips every bit of the byte at `offset` (negative:
// from the end), and tries to load the copy into an MLP of `config`. Returns the one-line
// error message (throws if the load unexpectedly succeeds).
std::string load_corrupted_copy(const std::string& checkpoint_path, const std::string& copy_path,
                                std::int64_t offset, const MlpConfig& config);

}  // namespace attend::lesson03
