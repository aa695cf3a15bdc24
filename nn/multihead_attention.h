// Multi-head attention (Vaswani et al. 2017, section 3.2.2):
//
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
//   head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)        (scaled_dot_product_attention)
//
// Each of the h heads attends in its own d_k = E / h dimensional subspace, so one layer can
// look at several places at once (one head at the previous token, another at the subject)
// for the cost of a single full-size attention.
//
// Same semantics and parameter layout as PyTorch's nn.MultiheadAttention, so PyTorch weights
// load by name and give PyTorch's numbers:
//   in_proj_weight [3E, E]  rows 0..E-1 are W^Q, E..2E-1 W^K, 2E..3E-1 W^V (all heads: head i
//                           uses rows i*d_k..(i+1)*d_k-1 of each)
//   in_proj_bias   [3E]
//   out_proj       Linear(E, E), W^O
// Inputs are [T, B, E] (PyTorch's default) or, with batch_first, [B, T, E]. The differences:
// masks are Mask objects (attention_mask.h says why), a query whose keys are all masked gets
// zero weights instead of NaN, and the weights returned are those before dropout.
//
// weights_hook, like a PyTorch forward hook on the attention weights: when set, every call
// (forward, forward_step, attend_cached) hands it the per-head weights [B, H, Tq, Tk], after
// the softmax and the masks and before dropout and the product with V, and uses what it
// returns (same shape) instead; need_weights then returns the hook's weights. forward() takes
// the unfused path while a hook is set (the fused op never forms the weights). Lesson 13 masks
// heads and permutes weights with it; an empty hook changes nothing.
#pragma once

#include <functional>

#include "nn/attention_mask.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

struct MultiheadAttentionOptions {
  double dropout = 0;        // on the attention weights, in training mode
  bool bias = true;          // in_proj_bias and out_proj.bias
  bool batch_first = false;  // false: [T, B, E] as PyTorch's default; true: [B, T, E]
};

// The arguments of PyTorch's forward() after query, key and value.
struct MhaForward {
  Mask key_padding_mask{};  // [B, Tk]: Mask::blocked(is_padding) hides padded keys
  bool need_weights = true;
  Mask attn_mask{};  // [Tq, Tk], or [B * H, Tq, Tk] for a mask per batch element and head
  bool average_attn_weights = true;  // weights [B, Tq, Tk] averaged over heads, or per head
  bool is_causal = false;            // adds causal_mask(Tq)
};

struct MhaOutput {
  Tensor output{};   // like the query: [Tq, B, E] or [B, Tq, E]
  Tensor weights{};  // [B, Tq, Tk] or [B, H, Tq, Tk]; in the graph; undefined if not needed
};

// Keys and values already projected and split into heads, [B, H, T, d_k]: what a decoder
// keeps between steps so that each new position costs one row of attention, not T.
struct KeyValueCache {
  Tensor keys{};
  Tensor values{};
  Index length() const { return keys.defined() ? keys.size(2) : 0; }
};

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(Index embed_dim, Index num_heads, MultiheadAttentionOptions options = {},
                     Generator& gen = default_generator());

  MhaOutput forward(const Tensor& query, const Tensor& key, const Tensor& value,
                    const MhaForward& args = {});
  MhaOutput operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                       const MhaForward& args = {}) {
    return forward(query, key, value, args);
  }

  // Decoding one step at a time. forward_step(x, cache) is self-attention of the new
  // positions x ([S, B, E] or [B, S, E], usually S = 1) over every position cached so far and
  // themselves (causally); it appends their keys and values to the cache. It equals forward()
  // on the whole sequence with a causal mask, restricted to the new rows.
  MhaOutput forward_step(const Tensor& x, KeyValueCache& cache, bool need_weights = false);
  // Cross-attention to a fixed memory (the encoder's output): project it once, then attend.
  KeyValueCache cache_memory(const Tensor& memory);
  MhaOutput attend_cached(const Tensor& query, const KeyValueCache& memory,
                          const Mask& key_padding_mask = {}, bool need_weights = false);

  std::string describe() const override;

  using WeightsHook = std::function<Tensor(const Tensor& weights)>;
  WeightsHook weights_hook{};  // see the top of the file

  Index embed_dim, num_heads, head_dim;
  double dropout;
  bool batch_first;
  Tensor in_proj_weight;  // [3E, E]
  Tensor in_proj_bias;    // [3E], undefined without bias
  Linear out_proj;

 private:
  Generator* gen_;
  // x [B, T, E] -> [B, H, T, d_k] through block `part` (0 query, 1 key, 2 value) of in_proj.
  Tensor project(const Tensor& x, int part) const;
  // Attention of projected heads, merged and through out_proj: [B, Tq, E], weights per head.
  MhaOutput attend_heads(const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask,
                         bool need_weights, bool average);
  // The fused path of forward() (need_weights false, no dropout, at most a causal mask):
  // [B, T, E] inputs -> context [B, Tq, E] before out_proj. self_attention: the three are
  // one tensor, projected by one product.
  Tensor attend_fused(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                      bool self_attention, bool is_causal) const;
  Tensor to_batch_first(const Tensor& x, std::string_view what) const;
  Tensor from_batch_first(const Tensor& x) const;
};

}  // namespace attend::nn
