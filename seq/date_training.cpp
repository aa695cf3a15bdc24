// Training on the date task: length-sorted batches, exact match on the validation dates.
#include "seq/date_training.h"

#include "seq/date_evaluation.h"

namespace attend::seq {

TrainingResult train_on_dates(Seq2SeqModel& model, const DateTask& task, Index batch_size,
                              Generator& gen, const TrainingOptions& options) {
  std::vector<Index> lengths;
  for (const data::DateExample& e : task.train)
    lengths.push_back(static_cast<Index>(e.input.size()));
  auto batches = [&] {
    std::vector<Batch> out;
    for (const auto& rows : length_sorted_batches(lengths, batch_size, gen))
      out.push_back(date_batch(task, task.train, rows));
    return out;
  };
  auto validate = [&] {
    return exact_match(task.validation, predict_dates(model, task, task.validation));
  };
  return train(model, batches, validate, options);
}

}  // namespace attend::seq
