// The training loop of an encoder-decoder: Adam, gradient clipping, a time budget, early
// stopping on a validation score, progress lines (TrainingOptions::progress) and a CSV log; and
// held-out scores.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nn/optim/schedule.h"
#include "seq/model.h"

namespace attend::seq {

struct TrainingOptions {
  int max_epochs = 30;
  double seconds = 60;  // stop after this much training time (checked after every step)
  double learning_rate = 3e-3;
  // The learning rate of every step (e.g. warm-up, optim::NoamSchedule); if empty,
  // learning_rate throughout.
  optim::Schedule schedule = {};
  double clip_norm = 1.0;          // global gradient norm (Bahdanau et al. 2015 clip at 1)
  double stop_at = 2.0;            // stop once the validation score reaches this (above 1: never)
  std::string log_path = "";       // CSV of every epoch; "" for none
  std::string label = "training";  // the progress line's unit
  bool progress = true;            // the progress line on stderr (false: none)
};

struct TrainingResult {
  int epochs = 0;
  Index steps = 0;
  double seconds = 0;
  std::vector<double> train_loss;        // per epoch
  std::vector<double> validation_score;  // per epoch
  bool reached_target = false;
  bool out_of_time = false;
};

// Adam with a constant (or scheduled) learning rate and gradient-norm clipping, on the loss of
// teacher forcing. `batches` gives one epoch's batches; `validate` scores the model (e.g. exact
// match) after each epoch.
TrainingResult train(Seq2SeqModel& model, const std::function<std::vector<Batch>()>& batches,
                     const std::function<double()>& validate, const TrainingOptions& options);

// Teacher-forced scores on held-out batches, without recording a graph: the mean
// cross-entropy per real target token, and the share of those tokens that are the most
// probable ones (argmax of the logits) given the true prefix.
struct HeldOutLoss {
  double loss = 0;
  double token_accuracy = 0;
};
HeldOutLoss held_out_loss(Seq2SeqModel& model, const std::vector<Batch>& batches);

}  // namespace attend::seq
