// The training objective of soft attention (Xu et al. 2015, section 4.2.1):
//
//   L_d = -log p(y | a) + lambda sum_i^L (1 - sum_t^C alpha_ti)^2
//
// the captions' negative log-likelihood plus the doubly stochastic penalty
// (nn::doubly_stochastic_penalty, nn/loss.h).
#pragma once

#include "seq/captioning/caption_data.h"
#include "seq/captioning/caption_decoder.h"

namespace attend::captioning {

// -log p(y|a): the words' negative log-likelihoods summed over each caption, averaged over
// the batch (as in the paper and the authors' code). Padded steps count for nothing.
Tensor caption_nll(const Tensor& logits, const Tensor& targets);

// One training step's loss, and its two parts for the report.
struct CaptionLoss {
  Tensor total;  // nll + lambda * penalty
  double nll = 0, penalty = 0;
};
// The soft-attention loss of a batch under teacher forcing.
CaptionLoss soft_attention_loss(CaptionDecoder& decoder, const Tensor& regions,
                                const CaptionBatch& batch, double lambda);

}  // namespace attend::captioning
