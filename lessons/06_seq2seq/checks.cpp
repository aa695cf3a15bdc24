// Checks of a whole model: its gradient against finite differences, and the attention
// weights it records.
#include <algorithm>
#include <cmath>

#include "lessons/06_seq2seq/lesson.h"

namespace attend::lesson06 {

Batch tiny_batch(Index vocabulary) {
  if (vocabulary < 6) fail("tiny_batch: needs a vocabulary of at least 6 ids, got {}", vocabulary);
  const std::int64_t v = vocabulary;
  // Ids 4.. are real tokens (0-3 are <pad>, <bos>, <eos>, <unk>). The second sentence is
  // shorter on both sides, so its source and its target are padded.
  return make_batch({{4, 5, v - 1, 4, 5}, {v - 1, 4, 5}}, {{5, 4, v - 1, 4}, {4, v - 1}});
}

GradcheckResult gradcheck_model(Seq2SeqModel& model, const Batch& batch) {
  for (const Tensor& p : model.parameters())
    if (p.dtype() != kFloat64)
      fail("gradcheck_model: convert the model to float64 first (model.to(kFloat64))");
  // The loss of the whole batch as a function of every parameter of the model.
  TensorFunction loss = [&](const std::vector<Tensor>&) {
    return sequence_loss(teacher_forced(model, batch).logits, batch.target);
  };
  return gradcheck(loss, model.parameters());
}

AttentionInvariants check_attention(const Tensor& weights, const Tensor& source_mask) {
  if (!weights.defined()) fail("check_attention: the model recorded no attention weights");
  const Index B = weights.size(0), T = weights.size(1), S = weights.size(2);
  if (source_mask.shape() != Shape{B, S})
    fail("check_attention: weights {} do not match the mask {}", weights.shape(),
         source_mask.shape());
  NDArray w = weights.data().to(kFloat64), keep = source_mask.data().to(kFloat64);
  AttentionInvariants result;
  for (Index b = 0; b < B; ++b)
    for (Index i = 0; i < T; ++i) {
      double row_sum = 0;
      for (Index j = 0; j < S; ++j) {
        const double alpha = w.data<double>()[(b * T + i) * S + j];
        row_sum += alpha;
        if (keep.data<double>()[b * S + j] == 0) {
          result.largest_masked_weight = std::max(result.largest_masked_weight, std::abs(alpha));
          ++result.masked_positions;
        }
      }
      result.largest_row_sum_error = std::max(result.largest_row_sum_error, std::abs(row_sum - 1));
      ++result.rows;
    }
  return result;
}

}  // namespace attend::lesson06
