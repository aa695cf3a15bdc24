// The date task as token ids: vocabularies, splits and batches.
#include "seq/date_task.h"

namespace attend::seq {

using data::DateExample;
using data::Vocabulary;

Vocabulary date_source_vocabulary() {
  return Vocabulary::of_characters("abcdefghijklmnopqrstuvwxyz0123456789 ,./-");
}

Vocabulary date_target_vocabulary() {
  return Vocabulary::of_characters("0123456789-");
}

DateTask make_date_task(std::size_t train, std::size_t validation, std::size_t test,
                        std::uint64_t seed) {
  // Test first (see date_task.h), then validation, then training: no (date, format) pair is in
  // two of them.
  data::DateSplits splits = data::make_date_splits(test, validation, train, seed);
  DateTask task;
  task.test = std::move(splits.train);
  task.validation = std::move(splits.validation);
  task.train = std::move(splits.test);
  return task;
}

Batch date_batch(const DateTask& task, const std::vector<DateExample>& examples,
                 const std::vector<std::size_t>& rows) {
  std::vector<TokenIds> sources, targets;
  for (std::size_t row : rows) {
    if (row >= examples.size())
      fail("date_batch: row {} is outside the {} examples", row, examples.size());
    const DateExample& e = examples[row];
    sources.push_back(task.source_vocabulary.encode_characters(e.input));
    targets.push_back(task.target_vocabulary.encode_characters(e.output));
  }
  return make_batch(sources, targets);
}

}  // namespace attend::seq
