// Gradient-weighted attention relevance (Chefer, Gur & Wolf 2021b, "Generic Attention-model
// Explainability for Interpreting Bi-Modal and Encoder-Decoder Transformers", ICCV).
//
// Rollout (rollout.h) trusts every head equally and cannot tell one class from another. Chefer
// et al. weigh each attention weight by the gradient of the target's score y_t (the logit,
// before the softmax) with respect to it, keep only the positive part, then average the heads:
//     Ā = E_h[ (∇A ⊙ A)^+ ],   ∇A = ∂y_t / ∂A                      eq. (5)
// The clamp comes BEFORE the head mean (the authors' code: (grad * cam).clamp(min=0).mean(0)),
// so a head that argues against the class cannot cancel one that argues for it.
// Relevance starts as the identity (each token explains itself: R = I) and accumulates over
// the blocks in forward order, for self-attention:
//     R <- R + Ā · R                                                 eq. (6)
// The added identity plays the part of rollout's residual; there is no row renormalisation
// for pure self-attention (eqs. 8-9 normalise only before the co-attention rules of an
// encoder-decoder: encoder_decoder_relevance.h). Row i of R: how much each input token is relevant
// to token i at the top; a ViT's explanation is R[class token, 1:].
//
// The functions take arrays, so any model can use them: the attention of each block
// [H, T, T] for one example and its gradient. Attention layers keep their weights in the graph
// (nn::MhaOutput::weights with need_weights and average_attn_weights = false, or
// nn::TransformerEncoderLayer::self_attention_weights): call retain_grad() on them before
// backward() from y_t, then read weights.grad().
#pragma once

#include <vector>

#include "tensor/ndarray.h"

namespace attend::interpret {

// Eq. (5): attention [H, Tq, Tk] and its gradient (same shape) -> Ā [Tq, Tk], float64.
// Self-attention has Tq = Tk; cross-attention (encoder_decoder_relevance.h) need not.
NDArray gradient_weighted_attention(const NDArray& attention, const NDArray& gradient);

// Eq. (6) over the blocks in forward order (block 1 first): R [T, T], float64.
NDArray attention_relevance(const std::vector<NDArray>& attentions,
                            const std::vector<NDArray>& gradients);

}  // namespace attend::interpret
