// The two layers of the Transformer (Vaswani et al. 2017, section 3.1), with PyTorch's names,
// parameter layout and defaults (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer).
//
// Encoder layer: self-attention, then a position-wise feed-forward network
//   FFN(x) = linear2(dropout(activation(linear1(x))))          (section 3.3, eq. 2)
// Decoder layer: masked self-attention, attention to the encoder's output ("memory"), FFN.
//
// Each sub-layer is wrapped in a residual connection and a LayerNorm, in one of two orders:
//   norm_first = false (the paper's post-norm):  x = norm(x + dropout(sublayer(x)))
//   norm_first = true  (pre-norm, as GPT-2):     x = x + dropout(sublayer(norm(x)))
// Pre-norm keeps an un-normalised path from input to output, so gradients reach the first
// layers undamped: it trains without warm-up and at higher learning rates, where post-norm
// needs warm-up (Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture").
//
// Each layer keeps the per-head weights of its last forward pass (in the graph, so their
// gradients can be read after backward()) for the lessons that read attention maps.
#pragma once

#include <functional>

#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/multihead_attention.h"

namespace attend::nn {

enum class Activation { relu, gelu, gelu_tanh };

struct TransformerLayerOptions {
  Index dim_feedforward = 2048;
  double dropout = 0.1;  // on the attention weights, the sub-layer outputs and inside the FFN
  Activation activation = Activation::relu;
  double layer_norm_eps = 1e-5;
  bool batch_first = false;  // [T, B, E] by default, as PyTorch; true: [B, T, E]
  bool norm_first = false;   // false: post-norm (the paper); true: pre-norm (GPT-2)
  bool bias = true;
  // Keep the attention weights of each forward (self_attention_weights, ...) for reading
  // maps. false: do not keep them, as PyTorch's layers (need_weights=False); attention then
  // takes MultiheadAttention's fused path (fused_attention.h), faster for training.
  bool need_weights = true;
};

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(Index d_model, Index nhead, TransformerLayerOptions options = {},
                          Generator& gen = default_generator());
  Tensor forward(const Tensor& src, const Mask& src_mask = {},
                 const Mask& src_key_padding_mask = {}, bool is_causal = false);
  Tensor operator()(const Tensor& src, const Mask& src_mask = {},
                    const Mask& src_key_padding_mask = {}, bool is_causal = false) {
    return forward(src, src_mask, src_key_padding_mask, is_causal);
  }
  // Causal decoding (a GPT block): the new positions attend to the cached ones and
  // themselves; equals forward(..., is_causal = true) restricted to the new rows.
  Tensor forward_step(const Tensor& x, KeyValueCache& cache);
  std::string describe() const override;
  // Switches TransformerLayerOptions::need_weights after construction: train on the fused
  // path (off), then switch it on to read the maps of a trained model.
  void set_need_weights(bool on) { options_.need_weights = on; }
  bool need_weights() const { return options_.need_weights; }

  MultiheadAttention self_attn;
  Linear linear1, linear2;
  LayerNorm norm1, norm2;
  Tensor self_attention_weights;  // [B, H, Tq, Tk] of the last forward (or step)

 private:
  TransformerLayerOptions options_;
  Generator* gen_;
};

struct DecoderMasks {
  Mask tgt_mask{};                 // [T, T], e.g. causal_mask(T)
  Mask memory_mask{};              // [T, S]
  Mask tgt_key_padding_mask{};     // [B, T]
  Mask memory_key_padding_mask{};  // [B, S]
  bool tgt_is_causal = false;      // adds causal_mask(T) to tgt_mask
};

// What a decoder layer keeps between decoding steps.
struct DecoderLayerCache {
  KeyValueCache self{};    // grows by one position per step
  KeyValueCache memory{};  // the memory projected once (start_decoding)
  Mask memory_key_padding_mask{};
};

class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer(Index d_model, Index nhead, TransformerLayerOptions options = {},
                          Generator& gen = default_generator());
  Tensor forward(const Tensor& tgt, const Tensor& memory, const DecoderMasks& masks = {});
  Tensor operator()(const Tensor& tgt, const Tensor& memory, const DecoderMasks& masks = {}) {
    return forward(tgt, memory, masks);
  }
  // Greedy or beam decoding with a key/value cache: start_decoding once per source, then
  // forward_step with the newest target position(s); equals forward() with a causal tgt_mask.
  DecoderLayerCache start_decoding(const Tensor& memory, const Mask& memory_key_padding_mask = {});
  Tensor forward_step(const Tensor& tgt, DecoderLayerCache& cache);
  std::string describe() const override;

  MultiheadAttention self_attn;
  MultiheadAttention multihead_attn;  // attention to the memory (PyTorch's name)
  Linear linear1, linear2;
  LayerNorm norm1, norm2, norm3;
  Tensor self_attention_weights;   // [B, H, T, T] of the last forward (or step)
  Tensor cross_attention_weights;  // [B, H, T, S]

 private:
  TransformerLayerOptions options_;
  Generator* gen_;
};

// The activation by name, for flags: "relu", "gelu", "gelu_tanh".
Activation activation_from_name(std::string_view name);
Tensor activate(const Tensor& x, Activation activation);

}  // namespace attend::nn
