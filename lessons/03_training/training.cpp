// (3) The training loop. Every model in this course is trained by the same five lines,
// train_step below:
//
//   optimizer.zero_grad();                 // backward() adds into .grad: clear last step's
//   Tensor logits = model(batch.inputs);   // forward: [B, 10] raw scores
//   Tensor loss = cross_entropy(logits, batch.targets);   // one number: mean -log p(true)
//   check_loss_is_finite(...);             // an inf or NaN loss stops training here
//   loss.backward();                       // dloss/dparameter for every parameter
//   optimizer.step();                      // move every parameter against its gradient
//
// An epoch is one pass over the training pictures in a new random order, cut into batches;
// after each epoch the model is evaluated on the test pictures it never trains on.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <sstream>
#include <utility>

#include "lesson.h"

namespace attend::lesson03 {

double train_step(Classifier& model, optim::Optimizer& optimizer, const data::Batch& batch,
                  std::string_view loop, Index step) {
  optimizer.zero_grad();
  Tensor logits = model(batch.inputs);
  Tensor loss = nn::cross_entropy(logits, batch.targets);
  optim::check_loss_is_finite(loop, step, loss.item());  // before a NaN reaches the parameters
  loss.backward();
  optimizer.step();
  return loss.item();
}

optim::Schedule learning_rate_schedule(double learning_rate, bool cosine,
                                       std::int64_t total_steps) {
  if (!cosine) return [learning_rate](std::int64_t) { return learning_rate; };
  return optim::CosineAnnealing(learning_rate, total_steps);
}

double train_epoch(Classifier& model, optim::Optimizer& optimizer, const optim::Schedule& schedule,
                   data::DataLoader& loader, int epoch, std::uint64_t seed,
                   std::vector<double>* step_losses, viz::Progress* progress) {
  model.train();  // dropout on
  model.dropout_generator().manual_seed(stream_seed(seed, kDropoutStream, epoch));
  double sum = 0;
  Index steps = 0;
  const std::string loop = fmt::format("train, epoch {}", epoch);
  for (const data::Batch& batch : loader) {  // begin() draws this epoch's order
    optim::apply_schedule(optimizer, schedule);
    const double loss = train_step(model, optimizer, batch, loop, steps + 1);
    sum += loss;
    ++steps;
    if (step_losses != nullptr) step_losses->push_back(loss);
    if (progress != nullptr) progress->step(loss, batch.size());
  }
  return sum / static_cast<double>(std::max<Index>(steps, 1));
}

Evaluation evaluate(Classifier& model, const data::LabelledImages& images, Index batch_size) {
  if (images.size() == 0) fail("evaluate: there are no pictures to evaluate on");
  model.eval();          // dropout off: every unit, unscaled
  NoGradGuard no_graph;  // nothing will call backward(): record nothing
  Evaluation out;
  out.confusion = NDArray::zeros({kClasses, kClasses}, kInt64);
  std::int64_t* counts = out.confusion.data<std::int64_t>();
  const data::ArrayDataset dataset = images.dataset();
  double loss_sum = 0;
  Index correct = 0;
  for (Index start = 0; start < dataset.size(); start += batch_size) {
    const data::Batch batch = dataset.range(start, std::min(start + batch_size, dataset.size()));
    Tensor logits = model(batch.inputs);
    // The sum over the batch, so that a smaller last batch is weighted by its size.
    loss_sum += nn::cross_entropy(logits, batch.targets, {.reduction = nn::Reduction::kSum}).item();
    const NDArray predicted = argmax(logits.data(), 1);
    const std::int64_t* p = predicted.data<std::int64_t>();
    const std::int64_t* t = std::as_const(batch.targets.data()).data<std::int64_t>();
    for (Index i = 0; i < batch.size(); ++i) {
      ++counts[t[i] * kClasses + p[i]];
      correct += t[i] == p[i];
    }
  }
  const double n = static_cast<double>(dataset.size());
  out.loss = loss_sum / n;
  out.accuracy = static_cast<double>(correct) / n;
  return out;
}

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainOptions& options,
                                                 std::vector<Tensor> parameters) {
  if (options.optimizer == OptimizerKind::kSgd)
    return std::make_unique<optim::SGD>(
        std::move(parameters),
        optim::SGDOptions{.lr = options.learning_rate, .momentum = options.momentum});
  return std::make_unique<optim::Adam>(std::move(parameters),
                                       optim::AdamOptions{.lr = options.learning_rate});
}

std::vector<EpochResult> train_model(Classifier& model, const Data& data,
                                     const TrainOptions& options,
                                     const std::function<void(const EpochResult&)>& after_epoch) {
  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(options, model.parameters());
  data::DataLoader loader(data.train.dataset(),
                          {.batch_size = options.batch_size,
                           .shuffle = true,
                           .seed = stream_seed(options.seed, kShuffleStream)});
  const optim::Schedule schedule = learning_rate_schedule(
      options.learning_rate, options.cosine, std::int64_t{options.epochs} * loader.size());
  viz::ProgressOptions progress_options;
  progress_options.epochs = options.epochs;
  progress_options.unit = "images";
  std::ostringstream quiet;  // where the progress line goes when it is switched off
  if (!options.progress) progress_options.out = &quiet;
  viz::Progress progress(loader.size(), progress_options);
  std::vector<EpochResult> results;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();  // the process's time on all processors
    progress.start_epoch();
    EpochResult result;
    result.epoch = epoch;
    train_epoch(model, *optimizer, schedule, loader, epoch, options.seed, nullptr, &progress);
    result.train_loss = progress.end_epoch();
    result.test = evaluate(model, data.test, options.eval_batch_size);
    result.seconds = app::seconds_since(start);
    result.cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    results.push_back(result);
    if (after_epoch) after_epoch(result);
  }
  return results;
}

std::vector<Confusion> most_confused(const NDArray& confusion, Index top) {
  if (confusion.ndim() != 2 || confusion.size(0) != confusion.size(1))
    fail("most_confused: needs a square matrix, got {}", confusion.shape());
  const Index classes = confusion.size(0);
  std::vector<Confusion> cells;
  for (Index truth = 0; truth < classes; ++truth)
    for (Index predicted = 0; predicted < classes; ++predicted)
      if (truth != predicted)
        cells.push_back({truth, predicted, static_cast<Index>(confusion.at({truth, predicted}))});
  // stable_sort keeps the row-major order among equal counts.
  std::stable_sort(cells.begin(), cells.end(),
                   [](const Confusion& a, const Confusion& b) { return a.count > b.count; });
  cells.resize(static_cast<std::size_t>(std::clamp<Index>(top, 0, Index(cells.size()))));
  return cells;
}

std::vector<double> per_class_accuracy(const NDArray& confusion) {
  std::vector<double> accuracy;
  for (Index truth = 0; truth < confusion.size(0); ++truth) {
    double row = 0;
    for (Index predicted = 0; predicted < confusion.size(1); ++predicted)
      row += confusion.at({truth, predicted});
    accuracy.push_back(row > 0 ? confusion.at({truth, truth}) / row : 0.0);
  }
  return accuracy;
}

}  // namespace attend::lesson03
