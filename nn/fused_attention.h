// Multi-head scaled dot-product attention as ONE autograd op, for when nobody needs the
// attention weights (training a Transformer): MultiheadAttention takes this path when
// need_weights is false, there is no dropout and no mask other than the causal one.
//
//   context_h = softmax(Q_h K_h^T * scale + causal) V_h      for every head h
//
// The composed path (scaled_dot_product_attention.h) builds the same numbers from matmul,
// masked_fill, softmax and matmul on [B, H, T, d] tensors, which costs a head split and
// merge (two permute copies each way), a mask broadcast and five graph nodes per layer, and
// puts tiny 32 x 16 x 32 products through the general GEMM. Here each (batch, head) pair is
// a few small loops over contiguous buffers, the heads are read where the projection wrote
// them, and the context is written where out_proj reads it. The weights are kept for the
// backward pass but are not a tensor in the graph: take the composed path to read or
// differentiate them (MultiheadAttention does when need_weights is true).
//
// Layout: the heads sit side by side in the last axis, as a Linear produces them:
//   q [B, Tq, H*d], k [B, Tk, H*d], v [B, Tk, H*dv]  ->  context [B, Tq, H*dv]
// (head h is columns h*d .. (h+1)*d - 1), the same numbers as PyTorch's
// nn.MultiheadAttention(batch_first=True) before out_proj.
#pragma once

#include "autograd/tensor.h"

namespace attend::nn {

struct FusedAttentionOptions {
  bool is_causal = false;  // query i sees keys 0..i (needs Tq == Tk)
  double scale = 0;        // 0 means 1 / sqrt(d)
};

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, Index heads,
                       const FusedAttentionOptions& options = {});

// Self-attention from one packed projection qkv [B, T, 3E] (queries, keys, values side by
// side, as x @ in_proj_weight^T gives them) -> [B, T, E]: no slicing copies.
Tensor fused_self_attention(const Tensor& qkv, Index heads,
                            const FusedAttentionOptions& options = {});

}  // namespace attend::nn
