// The training loop of an encoder-decoder, and its held-out scores.
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>

#include "seq/training.h"

#include "app/clock.h"
#include "nn/data/vocabulary.h"
#include "nn/optim/optim.h"
#include "nn/viz/viz.h"
#include "seq/teacher_forcing.h"
#include "tensor/reduce.h"

namespace attend::seq {

using app::seconds_since;
using data::Vocabulary;

TrainingResult train(Seq2SeqModel& model, const std::function<std::vector<Batch>()>& batches,
                     const std::function<double()>& validate, const TrainingOptions& options) {
  if (options.max_epochs < 1)
    fail("train: --epochs must be at least 1, got {}", options.max_epochs);
  if (!(options.seconds > 0))
    fail("train: the time budget must be positive, got {}", options.seconds);
  if (!(options.learning_rate > 0))
    fail("train: the learning rate must be positive, got {}", options.learning_rate);
  optim::Adam adam(model.parameters(), {.lr = options.learning_rate});
  std::unique_ptr<viz::CsvLog> log;
  if (!options.log_path.empty())
    log = std::make_unique<viz::CsvLog>(
        options.log_path,
        std::vector<std::string>{"epoch", "steps", "seconds", "train_loss", "validation_score"});

  TrainingResult result;
  const auto start = std::chrono::steady_clock::now();
  std::vector<Batch> epoch_batches = batches();
  viz::ProgressOptions shown;
  shown.epochs = options.max_epochs;
  shown.unit = options.label;
  std::ostringstream quiet;  // where the progress line goes when it is switched off
  if (!options.progress) shown.out = &quiet;
  viz::Progress progress(static_cast<Index>(epoch_batches.size()), shown);
  for (int epoch = 1; epoch <= options.max_epochs && !result.out_of_time; ++epoch) {
    model.train();
    if (epoch > 1) epoch_batches = batches();  // a new order every epoch
    progress.start_epoch();
    for (const Batch& batch : epoch_batches) {
      if (options.schedule) optim::apply_schedule(adam, options.schedule);
      adam.zero_grad();
      Tensor loss = sequence_loss(teacher_forced(model, batch).logits, batch.target);
      const double value = loss.item();
      optim::check_loss_is_finite("train", result.steps + 1, value);
      loss.backward();
      optim::clip_grad_norm(model.parameters(), options.clip_norm);
      adam.step();
      ++result.steps;
      progress.step(value, batch.size());
      if (seconds_since(start) > options.seconds) {
        result.out_of_time = true;
        break;
      }
    }
    result.train_loss.push_back(progress.end_epoch());
    model.eval();
    result.validation_score.push_back(validate());
    result.epochs = epoch;
    result.seconds = seconds_since(start);
    if (log)
      log->write({{"epoch", epoch},
                  {"steps", static_cast<double>(result.steps)},
                  {"seconds", result.seconds},
                  {"train_loss", result.train_loss.back()},
                  {"validation_score", result.validation_score.back()}});
    if (result.validation_score.back() >= options.stop_at) {
      result.reached_target = true;
      break;
    }
  }
  return result;
}

HeldOutLoss held_out_loss(Seq2SeqModel& model, const std::vector<Batch>& batches) {
  NoGradGuard no_graph;
  double loss_sum = 0;
  Index tokens = 0, correct = 0;
  for (const Batch& batch : batches) {
    const Tensor logits = teacher_forced(model, batch).logits;
    const NDArray best = argmax(logits.data(), 2);
    const NDArray& target = batch.target.data();
    Index real = 0;
    for (Index i = 0; i < target.numel(); ++i) {
      const std::int64_t y = target.data<std::int64_t>()[i];
      if (y == Vocabulary::kPad) continue;
      ++real;
      correct += best.data<std::int64_t>()[i] == y;
    }
    loss_sum += sequence_loss(logits, batch.target).item() * static_cast<double>(real);
    tokens += real;
  }
  if (tokens == 0) fail("held_out_loss: no target tokens in {} batches", batches.size());
  return {loss_sum / static_cast<double>(tokens),
          static_cast<double>(correct) / static_cast<double>(tokens)};
}

}  // namespace attend::seq
