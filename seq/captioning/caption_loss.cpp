// The training objective of soft attention (section 4.2.1):
//
//   L_d = -log p(y | a) + lambda sum_i^L (1 - sum_t^C alpha_ti)^2
//
// The first term is the caption's negative log-likelihood, summed over its words. The second
// is the "doubly stochastic" regulariser (nn::doubly_stochastic_penalty): softmax already
// makes every step's weights sum to 1 over the regions (sum_i alpha_ti = 1); this asks,
// softly, that every region's weights also sum to about 1 over the steps, so that the model
// looks at every part of the image at some point rather than staring at one region for the
// whole caption. The paper found it made captions richer and attention more interpretable;
// lesson 09 measures what it does to localisation (the lambda table).
//
// Deviation (stated in the chapter): the authors' code averages the penalty over the L
// regions; we follow the paper and sum over them. Like the paper (and unlike the code), we
// mask padded steps out of sum_t: they are not part of the caption.
#include "seq/captioning/caption_loss.h"

#include "autograd/ops.h"
#include "nn/loss.h"

namespace attend::captioning {

Tensor caption_nll(const Tensor& logits, const Tensor& targets) {
  Tensor per_word = nn::cross_entropy(
      logits, targets, {.ignore_index = Vocabulary::kPad, .reduction = nn::Reduction::kNone});
  return sum(per_word) / static_cast<double>(targets.size(0));
}

CaptionLoss soft_attention_loss(CaptionDecoder& decoder, const Tensor& regions,
                                const CaptionBatch& batch, double lambda) {
  UnrolledCaptions out = unroll(decoder, regions, batch.inputs);
  Tensor nll = caption_nll(out.logits, batch.targets);
  Tensor penalty = nn::doubly_stochastic_penalty(out.alphas, batch.mask);
  return {nll + lambda * penalty, nll.item(), penalty.item()};
}

}  // namespace attend::captioning
