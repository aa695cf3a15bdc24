// Teacher forcing: the decoder is fed the true previous token y_{i-1} at every step (not its
// own guess), so all T steps of a batch are trained at once; and the loss it is trained on.
#pragma once

#include "autograd/gradcheck.h"
#include "seq/model.h"

namespace attend::seq {

struct TeacherForced {
  Tensor logits;   // [B, T, V]
  Tensor weights;  // [B, T, S]: the attention of every step; undefined without attention
};
TeacherForced teacher_forced(Seq2SeqModel& model, const Batch& batch);

// The mean cross-entropy over the real (non-<pad>) target tokens: -1/N sum log p(y_i | ...),
// the negative log of eq. (2) of Bahdanau et al. (2015) per token.
Tensor sequence_loss(const Tensor& logits, const Tensor& target);

// Two sentences of different lengths on both sides (so both are padded), with ids below
// `vocabulary`: the batch of the gradchecks of whole models.
Batch tiny_batch(Index vocabulary);

// gradcheck (float64, its default tolerances) of the mean loss of teacher forcing on the
// batch, with respect to every parameter of the model. Convert the model first: to(kFloat64).
GradcheckResult gradcheck_model(Seq2SeqModel& model, const Batch& batch);

}  // namespace attend::seq
