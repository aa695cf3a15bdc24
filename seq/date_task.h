// The date task as token ids: "the 3rd of march, 2015" -> "2015-03-03", one character a
// token (nn/data/dates.h writes the dates). Lessons 06 and 07 and the Transformer lesson train
// on it and are scored on the very same held-out dates.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/data/dates.h"
#include "nn/data/vocabulary.h"
#include "seq/batch.h"

namespace attend::seq {

// The characters the date generator writes (letters, digits, " ,./-") and those of the
// "yyyy-mm-dd" outputs (digits and '-'), after the four special tokens.
data::Vocabulary date_source_vocabulary();
data::Vocabulary date_target_vocabulary();

struct DateTask {
  data::Vocabulary source_vocabulary = date_source_vocabulary();
  data::Vocabulary target_vocabulary = date_target_vocabulary();
  std::vector<data::DateExample> train, validation, test;
};
// make_date_splits fills its first split first, so asking it for the test set first keeps
// the held-out dates the same whatever the training size: every lesson (with the same seed)
// is scored on the very same dates.
DateTask make_date_task(std::size_t train, std::size_t validation, std::size_t test,
                        std::uint64_t seed);

// The examples picked by `rows`, encoded with the task's vocabularies.
Batch date_batch(const DateTask& task, const std::vector<data::DateExample>& examples,
                 const std::vector<std::size_t>& rows);

}  // namespace attend::seq
