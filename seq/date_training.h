// Training an encoder-decoder on the date task, the way every date lesson does it: batches of
// dates of similar length, early stopping on the greedy exact match of the validation dates.
#pragma once

#include "seq/date_task.h"
#include "seq/training.h"

namespace attend::seq {

// seq::train on the task's training dates, cut into batches of `batch_size` dates of similar
// length (length_sorted_batches, a new order drawn from `gen` every epoch), and validated
// after every epoch by the greedy exact match on the validation dates.
TrainingResult train_on_dates(Seq2SeqModel& model, const DateTask& task, Index batch_size,
                              Generator& gen, const TrainingOptions& options);

}  // namespace attend::seq
