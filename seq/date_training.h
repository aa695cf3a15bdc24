// Training an encoder-decoder on the date task, the way every date lesson does it: batches of
// dates of similar length, early stopping on the greedy exact match of the validation dates.
#pragma once

#include <cstdint>
#include <string>

#include "app/flags.h"
#include "seq/date_task.h"
#include "seq/training.h"

namespace attend::seq {

// seq::train on the task's training dates, cut into batches of `batch_size` dates of similar
// length (length_sorted_batches, a new order drawn from `gen` every epoch), and validated
// after every epoch by the greedy exact match on the validation dates.
TrainingResult train_on_dates(Seq2SeqModel& model, const DateTask& task, Index batch_size,
                              Generator& gen, const TrainingOptions& options);

// The defaults a lesson may change: a Transformer wants more epochs than a GRU.
struct DateTrainingDefaults {
  int epochs = 8;
  double seconds = 90;
  double lr = 5e-3;
};

// The flags of the date task and its training, the same in every date lesson (06, 07, ...),
// declared once: a lesson's Options derive from it and add the model's own flags.
struct DateTrainingFlags : app::Flags {
  DateTrainingFlags() = default;
  explicit DateTrainingFlags(const DateTrainingDefaults& defaults) : defaults_(defaults) {}

 private:
  DateTrainingDefaults defaults_;  // first: the flags below read it

 public:
  std::uint64_t seed =
      flag(seed, "seed", 0, "seed of the data split, the initial weights and the batch order");
  Index train_dates =
      flag(train_dates, "train-dates", 10000, "training dates", app::at_least<Index>(1));
  Index validation_dates = flag(validation_dates, "validation-dates", 1000,
                                "validation dates (early stopping)", app::at_least<Index>(1));
  Index test_dates =
      flag(test_dates, "test-dates", 1000, "held-out test dates", app::at_least<Index>(1));
  Index batch_size = flag(batch_size, "batch", 64, "dates per batch", app::at_least<Index>(1));
  int epochs = flag(epochs, "epochs", defaults_.epochs,
                    "at most this many passes over the training dates", app::at_least(1));
  double seconds =
      flag(seconds, "seconds", defaults_.seconds,
           "time budget of the date training in seconds (a safety net)", app::above(0.0));
  double lr = flag(lr, "lr", defaults_.lr, "Adam's learning rate", app::above(0.0));
  double clip = flag(clip, "clip", 1.0, "largest global gradient norm", app::above(0.0));
  double stop_at =
      flag(stop_at, "stop-at", 0.998,
           "validation exact match (0-1) at which the date training stops", app::at_least(0.0));
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
};

}  // namespace attend::seq
