#include "nn/transformer_layer.h"

#include "autograd/ops.h"
#include "nn/activation.h"

namespace attend::nn {
namespace {

using Sublayer = std::function<Tensor(const Tensor&)>;

// One residual sub-layer in either order (see the header):
//   post-norm  x = norm(x + dropout(sublayer(x)))
//   pre-norm   x = x + dropout(sublayer(norm(x)))
Tensor residual(const Tensor& x, LayerNorm& norm, const Sublayer& sublayer, bool norm_first,
                double p, bool training, Generator& gen) {
  if (norm_first) return x + dropout(sublayer(norm(x)), p, training, gen);
  return norm(x + dropout(sublayer(x), p, training, gen));
}

// The position-wise feed-forward network, section 3.3 eq. (2), with PyTorch's dropout inside:
//   FFN(x) = linear2(dropout(activation(linear1(x))))
Tensor feed_forward(const Tensor& x, Linear& linear1, Linear& linear2,
                    const TransformerLayerOptions& options, bool training, Generator& gen) {
  Tensor hidden = activate(linear1(x), options.activation);
  return linear2(dropout(hidden, options.dropout, training, gen));
}

MultiheadAttentionOptions attention_options(const TransformerLayerOptions& options) {
  return {.dropout = options.dropout, .bias = options.bias, .batch_first = options.batch_first};
}

void check_options(Index d_model, const TransformerLayerOptions& options, std::string_view op) {
  if (options.dim_feedforward < 1)
    fail("{}: dim_feedforward must be at least 1, got {}", op, options.dim_feedforward);
  if (options.dropout < 0 || options.dropout >= 1)
    fail("{}: dropout must be in [0, 1), got {}", op, options.dropout);
  if (d_model < 1) fail("{}: d_model must be at least 1, got {}", op, d_model);
}

}  // namespace

Activation activation_from_name(std::string_view name) {
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  if (name == "gelu_tanh") return Activation::gelu_tanh;
  fail("activation: unknown name '{}' (relu, gelu or gelu_tanh)", name);
}

Tensor activate(const Tensor& x, Activation activation) {
  switch (activation) {
    case Activation::relu:
      return relu(x);
    case Activation::gelu:
      return gelu(x);
    case Activation::gelu_tanh:
      return gelu(x, GeluApproximation::tanh);  // PyTorch's gelu(x, approximate="tanh")
  }
  return x;
}

// ---- encoder layer ---------------------------------------------------------------------------

TransformerEncoderLayer::TransformerEncoderLayer(Index d_model, Index nhead,
                                                 TransformerLayerOptions options, Generator& gen)
    : self_attn(d_model, nhead, attention_options(options), gen),
      linear1(d_model, options.dim_feedforward, options.bias, gen),
      linear2(options.dim_feedforward, d_model, options.bias, gen),
      norm1(d_model, options.layer_norm_eps),
      norm2(d_model, options.layer_norm_eps),
      options_(options),
      gen_(&gen) {
  check_options(d_model, options, "TransformerEncoderLayer");
  register_module("self_attn", self_attn);
  register_module("linear1", linear1);
  register_module("linear2", linear2);
  register_module("norm1", norm1);
  register_module("norm2", norm2);
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Mask& src_mask,
                                        const Mask& src_key_padding_mask, bool is_causal) {
  auto attend_to_self = [&](const Tensor& x) {
    MhaOutput out = self_attn(x, x, x,
                              {.key_padding_mask = src_key_padding_mask,
                               .need_weights = options_.need_weights,
                               .attn_mask = src_mask,
                               .average_attn_weights = false,
                               .is_causal = is_causal});
    self_attention_weights = out.weights;
    return out.output;
  };
  auto ffn = [&](const Tensor& x) {
    return feed_forward(x, linear1, linear2, options_, is_training(), *gen_);
  };
  const bool training = is_training();
  Tensor x =
      residual(src, norm1, attend_to_self, options_.norm_first, options_.dropout, training, *gen_);
  return residual(x, norm2, ffn, options_.norm_first, options_.dropout, training, *gen_);
}

Tensor TransformerEncoderLayer::forward_step(const Tensor& x_new, KeyValueCache& cache) {
  auto attend_to_cache = [&](const Tensor& x) {
    MhaOutput out = self_attn.forward_step(x, cache, /*need_weights=*/true);
    self_attention_weights = out.weights;
    return out.output;
  };
  auto ffn = [&](const Tensor& x) {
    return feed_forward(x, linear1, linear2, options_, is_training(), *gen_);
  };
  const bool training = is_training();
  Tensor x = residual(x_new, norm1, attend_to_cache, options_.norm_first, options_.dropout,
                      training, *gen_);
  return residual(x, norm2, ffn, options_.norm_first, options_.dropout, training, *gen_);
}

std::string TransformerEncoderLayer::describe() const {
  return fmt::format("TransformerEncoderLayer(d_model {}, {} heads, ffn {}, {})",
                     self_attn.embed_dim, self_attn.num_heads, options_.dim_feedforward,
                     options_.norm_first ? "pre-norm" : "post-norm");
}

// ---- decoder layer ---------------------------------------------------------------------------

TransformerDecoderLayer::TransformerDecoderLayer(Index d_model, Index nhead,
                                                 TransformerLayerOptions options, Generator& gen)
    : self_attn(d_model, nhead, attention_options(options), gen),
      multihead_attn(d_model, nhead, attention_options(options), gen),
      linear1(d_model, options.dim_feedforward, options.bias, gen),
      linear2(options.dim_feedforward, d_model, options.bias, gen),
      norm1(d_model, options.layer_norm_eps),
      norm2(d_model, options.layer_norm_eps),
      norm3(d_model, options.layer_norm_eps),
      options_(options),
      gen_(&gen) {
  check_options(d_model, options, "TransformerDecoderLayer");
  register_module("self_attn", self_attn);
  register_module("multihead_attn", multihead_attn);
  register_module("linear1", linear1);
  register_module("linear2", linear2);
  register_module("norm1", norm1);
  register_module("norm2", norm2);
  register_module("norm3", norm3);
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory,
                                        const DecoderMasks& masks) {
  auto attend_to_self = [&](const Tensor& x) {
    MhaOutput out = self_attn(x, x, x,
                              {.key_padding_mask = masks.tgt_key_padding_mask,
                               .need_weights = options_.need_weights,
                               .attn_mask = masks.tgt_mask,
                               .average_attn_weights = false,
                               .is_causal = masks.tgt_is_causal});
    self_attention_weights = out.weights;
    return out.output;
  };
  auto attend_to_memory = [&](const Tensor& x) {
    MhaOutput out = multihead_attn(x, memory, memory,
                                   {.key_padding_mask = masks.memory_key_padding_mask,
                                    .need_weights = options_.need_weights,
                                    .attn_mask = masks.memory_mask,
                                    .average_attn_weights = false});
    cross_attention_weights = out.weights;
    return out.output;
  };
  auto ffn = [&](const Tensor& x) {
    return feed_forward(x, linear1, linear2, options_, is_training(), *gen_);
  };
  const bool first = options_.norm_first, training = is_training();
  const double p = options_.dropout;
  Tensor x = residual(tgt, norm1, attend_to_self, first, p, training, *gen_);
  x = residual(x, norm2, attend_to_memory, first, p, training, *gen_);
  return residual(x, norm3, ffn, first, p, training, *gen_);
}

DecoderLayerCache TransformerDecoderLayer::start_decoding(const Tensor& memory,
                                                          const Mask& memory_key_padding_mask) {
  return {{}, multihead_attn.cache_memory(memory), memory_key_padding_mask};
}

Tensor TransformerDecoderLayer::forward_step(const Tensor& tgt, DecoderLayerCache& cache) {
  auto attend_to_self = [&](const Tensor& x) {
    MhaOutput out = self_attn.forward_step(x, cache.self, /*need_weights=*/true);
    self_attention_weights = out.weights;
    return out.output;
  };
  auto attend_to_memory = [&](const Tensor& x) {
    MhaOutput out = multihead_attn.attend_cached(x, cache.memory, cache.memory_key_padding_mask,
                                                 /*need_weights=*/true);
    cross_attention_weights = out.weights;
    return out.output;
  };
  auto ffn = [&](const Tensor& x) {
    return feed_forward(x, linear1, linear2, options_, is_training(), *gen_);
  };
  const bool first = options_.norm_first, training = is_training();
  const double p = options_.dropout;
  Tensor x = residual(tgt, norm1, attend_to_self, first, p, training, *gen_);
  x = residual(x, norm2, attend_to_memory, first, p, training, *gen_);
  return residual(x, norm3, ffn, first, p, training, *gen_);
}

std::string TransformerDecoderLayer::describe() const {
  return fmt::format("TransformerDecoderLayer(d_model {}, {} heads, ffn {}, {})",
                     self_attn.embed_dim, self_attn.num_heads, options_.dim_feedforward,
                     options_.norm_first ? "pre-norm" : "post-norm");
}

}  // namespace attend::nn
