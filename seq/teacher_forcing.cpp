// Teacher forcing, the sequence loss, and the gradcheck of a whole model through them.
#include "seq/teacher_forcing.h"

#include "autograd/ops.h"
#include "nn/data/vocabulary.h"
#include "nn/loss.h"

namespace attend::seq {

TeacherForced teacher_forced(Seq2SeqModel& model, const Batch& batch) {
  const Encoded encoded = model.encode(batch.source, batch.source_mask);
  DecoderSteps steps = model.decode_all(encoded, batch.decoder_input);
  // The output layer once for all steps: [B, T, F] -> [B, T, V].
  return {model.output_layer(steps.features), steps.weights};
}

Tensor sequence_loss(const Tensor& logits, const Tensor& target) {
  return nn::cross_entropy(logits, target, {.ignore_index = data::Vocabulary::kPad});
}

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
      fail(
          "gradcheck_model: a parameter {} is {}: convert the model to float64 first "
          "(model.to(kFloat64))",
          p.shape(), dtype_name(p.dtype()));
  // The loss of the whole batch as a function of every parameter of the model.
  TensorFunction loss = [&](const std::vector<Tensor>&) {
    return sequence_loss(teacher_forced(model, batch).logits, batch.target);
  };
  return gradcheck(loss, model.parameters());
}

}  // namespace attend::seq
