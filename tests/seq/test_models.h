// What the tests of seq/ share: a small date task and RNNsearch at tiny sizes.
#pragma once

#include "attend.h"

namespace attend::testing {

// 300 training, 40 validation and 40 test dates.
inline const seq::DateTask& small_task() {
  static const seq::DateTask task = seq::make_date_task(300, 40, 40, 5);
  return task;
}

// Sizes small enough for fast tests on the date task.
inline seq::ModelSizes tiny_date_sizes(const seq::DateTask& task) {
  return {.source_vocabulary = task.source_vocabulary.size(),
          .target_vocabulary = task.target_vocabulary.size(),
          .embedding = 4,
          .hidden = 6,
          .attention = 5,
          .maxout = 4};
}

// RNNsearch at the sizes of the gradchecks: vocabulary 8, m = 3, n = 4, n' = 5, l = 3.
inline seq::AttentionSeq2Seq tiny_model(std::uint64_t seed,
                                        seq::Scoring scoring = seq::Scoring::kAdditive,
                                        seq::Readout readout = seq::Readout::kMaxout,
                                        Index vocabulary = 8) {
  Generator gen(seed);
  return seq::AttentionSeq2Seq({.source_vocabulary = vocabulary,
                                .target_vocabulary = vocabulary,
                                .embedding = 3,
                                .hidden = 4,
                                .attention = 5,
                                .maxout = 3},
                               scoring, readout, gen);
}

}  // namespace attend::testing
