// Loss functions.
//
// cross_entropy takes raw scores (logits), not probabilities: log-softmax and the negative
// log-likelihood are fused into one op, which is numerically stable (no log(0)) and has a
// simple gradient, softmax(logits) - target distribution.
#pragma once

#include "autograd/tensor.h"

namespace attend::nn {

enum class Reduction {
  kMean,  // average over the counted (non-ignored) positions
  kSum,   // sum over them
  kNone   // one loss per position (0 at ignored ones), shaped like the targets
};

struct CrossEntropyOptions {
  // Positions whose target is ignore_index (padding) count for nothing.
  Index ignore_index = -100;
  // Label smoothing eps (Szegedy et al., 2016): the target puts 1 - eps on the true class
  // and spreads eps evenly over all C classes.
  double label_smoothing = 0;
  Reduction reduction = Reduction::kMean;
};

// logits [..., C] (float), targets [...] (int64 class indices in 0..C-1 or ignore_index).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& options = {});

// mean((prediction - target)^2)
Tensor mse_loss(const Tensor& prediction, const Tensor& target);

// Binary cross-entropy on logits x with targets y in [0, 1]:
//   mean(max(x, 0) - x y + log(1 + e^-|x|)),  the stable form of
//   -mean(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets);

// The doubly stochastic attention penalty of Show, Attend and Tell (Xu et al. 2015, section
// 4.2.1): sum_i (1 - sum_t alpha_ti)^2 per sequence, averaged over the batch. Softmax makes
// every step's weights sum to 1 over the L regions; this asks, softly, that every region's
// weights also sum to about 1 over the T steps, so that the model looks at every part of the
// input at some point rather than at one region throughout. alphas [B, T, L]; mask [B, T]
// (1 at real steps, 0 at padding, the dtype of alphas), or undefined: every step counts.
// Padded steps are left out of sum_t, as in the paper (the authors' code sums them, and
// averages over the L regions where we, like the paper, sum).
Tensor doubly_stochastic_penalty(const Tensor& alphas, const Tensor& mask = Tensor());

}  // namespace attend::nn
