// Relevance for an encoder-decoder Transformer (Chefer, Gur & Wolf 2021b, "Generic
// Attention-model Explainability for Interpreting Bi-Modal and Encoder-Decoder Transformers",
// ICCV, section 3): which SOURCE tokens an output token drew on, through the encoder's
// self-attention, the decoder's self-attention and the cross-attention between them.
// relevance.h has the pure self-attention case (a ViT); this is its encoder-decoder form.
//
// Three relevance maps, for S source tokens (encoder) and T target tokens (decoder):
//     R^{ss} [S, S] = I     each source token is made of itself
//     R^{tt} [T, T] = I     each target token is made of itself
//     R^{ts} [T, S] = 0     no target token has read the source yet
// (R^{st}, the source drawing on the target, stays 0 in an encoder-decoder: the encoder never
// sees the target.) Every attention map A of a block becomes one matrix (eq. 5, relevance.h):
//     Ā = E_h[(∇A ⊙ A)^+],   ∇A = ∂y_t / ∂A
// and the blocks update the maps in forward order (the encoder, then each decoder layer's
// self-attention and cross-attention):
//   encoder self-attention   R^{ss} += Ā R^{ss}                                   eq. (6)
//   decoder self-attention   R^{tt} += Ā R^{tt},  R^{ts} += Ā R^{ts}              eqs. (6), (7)
//   cross-attention          R^{ts} += (R̄^{tt})^T Ā R̄^{ss}                        eq. (10)
//                            (the second co-attention rule, R^{tt} += Ā R^{st}, adds 0 here)
// where R̄ is a self-relevance map normalised (eqs. 8-9): the identity taken out, each ROW
// divided by its sum, the identity put back,
//     R̄ = (R - I) / rowsum(R - I) + I.
// A self-relevance map accumulates from I with every block, so its size grows with depth;
// the normalisation puts the self-attention's part on the scale of one row of attention
// before it multiplies the cross-attention. (Dividing by the column sums, the classic
// normalisation-axis slip, gives other numbers; tests/interpret/test_encoder_decoder_relevance.cpp
// catches it.) A row of R - I that is all zero (a token nothing was added to) stays zero:
// the authors' code divides 0 by 0 there, then replaces the NaNs of the product by 0, which
// wipes the whole update; we keep the other rows.
//
// The transpose in eq. (10) is the paper's (and its code's, Transformer-MM-Explainability,
// DETR/modules/ExplanationGenerator.py, apply_mm_attention_rules). In a causal decoder read up
// to the target token t (the prefix that existed when t was written, as lesson 13 does), R^{tt}
// is lower-triangular, so row t of (R̄^{tt})^T is R̄^{tt}[t, t] e_t: the left factor only
// scales the cross-attention's row t, and the decoder's self-attention enters through eq. (7),
// which carries the earlier rows of R^{ts} into row t.
//
// The gradient-free analogues, for comparison:
//   - the same rules with Ā = E_h[A], the head mean (encoder_decoder_relevance without
//     gradients): what the gradient adds, isolated;
//   - the rollout baseline of Chefer et al. 2021b for encoder-decoders (their code's
//     generate_rollout): R^{ss} = the attention rollout of the encoder's self-attention,
//     R^{tt} = that of the decoder's (rollout.h: heads averaged, 0.5 A + 0.5 I, rows
//     renormalised, layers multiplied), and R^{ts} = (R^{tt})^T Ā_L R^{ss} with Ā_L the head
//     mean of the LAST decoder layer's cross-attention.
//
// Inputs: one example's attention, per layer in forward order and per head, as in rollout.h:
// encoder self-attention [H, S, S], decoder self-attention [H, T, T], cross-attention
// [H, T, S]; the gradients (if any) of the same shapes. float32 or float64; results float64.
#pragma once

#include <vector>

#include "tensor/ndarray.h"

namespace attend::interpret {

struct EncoderDecoderRelevance {
  NDArray source_source;  // R^{ss} [S, S]
  NDArray target_target;  // R^{tt} [T, T]
  NDArray target_source;  // R^{ts} [T, S]: row t, how much each source token is relevant to t
};

// R^{ss} = I_S, R^{tt} = I_T, R^{ts} = 0.
EncoderDecoderRelevance initial_relevance(Index source_tokens, Index target_tokens);

// Eq. (6) on the encoder: R^{ss} += Ā R^{ss}, Ā [S, S].
void apply_encoder_self_attention(EncoderDecoderRelevance& r, const NDArray& fused);
// Eqs. (6)-(7) on the decoder: R^{tt} += Ā R^{tt} and R^{ts} += Ā R^{ts}, Ā [T, T].
void apply_decoder_self_attention(EncoderDecoderRelevance& r, const NDArray& fused);
// Eqs. (8)-(9): R̄ = (R - I) / rowsum(R - I) + I for a square R (an all-zero row of R - I
// stays zero, see above).
NDArray normalised_self_relevance(const NDArray& relevance);
// Eq. (10): R^{ts} += (R̄^{tt})^T Ā R̄^{ss}, Ā [T, S]; normalise = false uses R^{tt} and
// R^{ss} as they are (the authors' ablation).
void apply_cross_attention(EncoderDecoderRelevance& r, const NDArray& fused, bool normalise = true);

// One example's attention maps (or their gradients), per layer in forward order.
struct EncoderDecoderAttention {
  std::vector<NDArray> encoder_self;  // [H, S, S] per encoder layer
  std::vector<NDArray> decoder_self;  // [H, T, T] per decoder layer
  std::vector<NDArray> cross;         // [H, T, S] per decoder layer
};

// E_h[A] for A [H, Tq, Tk]: [Tq, Tk], float64.
NDArray head_mean(const NDArray& attention);

// The whole model: R^{ss}, R^{tt}, R^{ts} = I, I, 0; the encoder's layers (eq. 6); then each
// decoder layer's self-attention (eqs. 6-7) and cross-attention (eq. 10). Each block's Ā is
// eq. (5) from `gradients` (the same layers and shapes as `attention`), or, when `gradients`
// is empty (all three lists), the head mean E_h[A]. Returns all three maps; R^{ts} is the
// explanation.
EncoderDecoderRelevance encoder_decoder_relevance(const EncoderDecoderAttention& attention,
                                                  const EncoderDecoderAttention& gradients = {});

// The rollout baseline (see above): (R^{tt})^T Ā_L R^{ss}, [T, S].
NDArray encoder_decoder_rollout(const EncoderDecoderAttention& attention);

}  // namespace attend::interpret
