// Scaled dot-product attention (Vaswani et al. 2017, eq. 1), the function behind every
// Transformer layer:
//
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + mask) V
//
//   q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv]  ->  context [..., Tq, Dv]
//                                                        weights [..., Tq, Tk]
//
// The leading axes ("...", e.g. [B, H] for batch and heads) must be equal in q, k and v.
// Why divide by sqrt(d_k): with unit-variance entries a dot product of D terms has variance
// D; without the scale, large D pushes the softmax into a near one-hot regime where its
// gradient vanishes.
//
// Like PyTorch's F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal,
// scale), except that it also returns the weights, which stay in the graph: a caller may
// retain_grad() them and read dL/dweights (gradient-weighted attention, lesson 13).
// The weights returned are those before dropout (rows sum to 1); the context uses the
// dropped-out ones.
//
// A weights hook (SdpaOptions::weights_hook) sees the weights after the softmax and the masks
// and returns the weights to use instead, before dropout and the product with v; the weights
// returned are then the hook's. Interventions are written with it: zero a head, permute or
// flatten a row (lesson 13). Like every op, the hook's own ops are differentiated through.
#pragma once

#include <functional>

#include "nn/attention.h"
#include "nn/attention_mask.h"
#include "tensor/random.h"

namespace attend::nn {

struct SdpaOptions {
  Mask attn_mask{};                // broadcasts to [..., Tq, Tk]
  double dropout_p = 0;            // on the weights; pass 0 in evaluation
  bool is_causal = false;          // adds causal_mask(Tq) (then Tq must equal Tk)
  double scale = 0;                // 0 means 1 / sqrt(D)
  Generator* generator = nullptr;  // draws the dropout mask; default_generator() if null
  // weights [..., Tq, Tk] -> the weights to use, of the same shape (see above); none if empty.
  std::function<Tensor(const Tensor& weights)> weights_hook{};
};

Attended scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const SdpaOptions& options = {});

// Throws, naming the op and both shapes, unless mask_shape broadcasts to scores_shape.
void check_mask_shape(const Shape& mask_shape, const Shape& scores_shape, std::string_view op,
                      std::string_view which);

}  // namespace attend::nn
