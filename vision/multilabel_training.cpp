// The multi-label training loop (multilabel_training.h): Adam with a cosine learning rate on
// one binary cross-entropy per class, scored on the validation canvases after every epoch.
#include "vision/multilabel_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "app/clock.h"
#include "autograd/tensor.h"
#include "nn/data/data_loader.h"
#include "nn/data/dataset.h"
#include "nn/loss.h"
#include "nn/optim/adam.h"
#include "nn/optim/fit.h"
#include "nn/optim/schedule.h"
#include "nn/viz/progress.h"
#include "tensor/error.h"
#include "tensor/shape_ops.h"
#include "vision/multilabel_metrics.h"

namespace attend::vision {
namespace {

// The learning rate falls along half a cosine to this share of its peak by the last step.
constexpr double kFinalLrShare = 0.1;

}  // namespace

NDArray predict_logits(nn::UnaryModule& model, const NDArray& images, Index batch) {
  if (batch < 1) fail("predict_logits: the batch must be at least 1, got {}", batch);
  if (images.ndim() < 1 || images.size(0) < 1)
    fail("predict_logits: needs a batch of at least one image, got {}", images.shape());
  NoGradGuard no_graph;
  std::vector<NDArray> parts;
  for (Index start = 0; start < images.size(0); start += batch) {
    const Index stop = std::min(images.size(0), start + batch);
    parts.push_back(model.forward(Tensor(slice(images, 0, start, stop))).data());
  }
  return concat(parts, 0);
}

void initialise_class_priors(nn::Linear& head, const CanvasSet& train) {
  if (!head.bias.defined()) fail("initialise_class_priors: the head has no bias");
  const std::vector<Index> counts = class_counts(train);
  const Index classes = head.bias.size(0);
  if (static_cast<Index>(counts.size()) != classes)
    fail("initialise_class_priors: {} classes in the data, {} in the model", counts.size(),
         classes);
  for (Index c = 0; c < classes; ++c) {
    const double p = (static_cast<double>(counts[static_cast<std::size_t>(c)]) + 1) /
                     (static_cast<double>(train.size()) + 2);
    head.bias.data().set({c}, std::log(p / (1 - p)));
  }
}

std::vector<EpochRecord> train_classifier(
    nn::UnaryModule& model, const CanvasSet& train, const CanvasSet& validation,
    const TrainOptions& options, const std::function<void(const EpochRecord&)>& after_epoch) {
  if (options.epochs < 1) fail("train_classifier: needs at least 1 epoch, got {}", options.epochs);
  if (options.batch < 1)
    fail("train_classifier: the batch must be at least 1, got {}", options.batch);
  if (!(options.lr > 0))
    fail("train_classifier: the learning rate must be positive, got {}", options.lr);

  data::DataLoader loader(
      data::ArrayDataset(train.images, train.labels),
      {.batch_size = options.batch, .shuffle = true, .seed = options.shuffle_seed});
  optim::Adam adam(model.parameters(), {.lr = options.lr});
  const std::int64_t total_steps = options.epochs * loader.size();
  const optim::Schedule schedule =
      optim::CosineAnnealing(options.lr, total_steps, options.lr * kFinalLrShare);
  std::ostringstream quiet;  // where the progress line goes when it is switched off
  viz::ProgressOptions progress_options;
  progress_options.epochs = options.epochs;
  progress_options.unit = "canvases";
  if (!options.progress) progress_options.out = &quiet;
  viz::Progress progress(loader.size(), progress_options);

  std::vector<EpochRecord> records;
  Index step = 0;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    model.train();
    progress.start_epoch();
    const auto start = std::chrono::steady_clock::now();
    for (const data::Batch& batch : loader) {
      optim::apply_schedule(adam, schedule);
      adam.zero_grad();
      Tensor loss =
          nn::binary_cross_entropy_with_logits(model.forward(batch.inputs), batch.targets);
      const double value = loss.item();
      optim::check_loss_is_finite("train_classifier", ++step, value);
      loss.backward();
      adam.step();
      progress.step(value, batch.size());
    }
    EpochRecord record;
    record.epoch = epoch;
    record.train_loss = progress.end_epoch();
    record.seconds = app::seconds_since(start);
    model.eval();
    ClassificationReport report =
        evaluate_classifier(predict_logits(model, validation.images), validation.labels);
    record.validation_loss = report.loss;
    record.validation_map = report.mean_average_precision;
    records.push_back(record);
    if (after_epoch) after_epoch(record);
  }
  return records;
}

std::string trained_classifier_file(const std::string& folder, const std::string& model,
                                    const CanvasDataOptions& data, const TrainOptions& training,
                                    bool standardized) {
  return fmt::format("{}/{}_seed{}_{}_canvas{}_train{}_epochs{}_batch{}_lr{}_shuffle{}_{}.ckpt",
                     folder, model, data.seed, data.synthetic ? "synthetic" : "fashion",
                     data.canvas_size, data.train, training.epochs, training.batch, training.lr,
                     training.shuffle_seed, standardized ? "standardized" : "raw");
}

}  // namespace attend::vision
