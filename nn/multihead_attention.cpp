#include "nn/multihead_attention.h"

#include <cmath>

#include "autograd/ops.h"
#include "nn/fused_attention.h"
#include "nn/init.h"
#include "nn/scaled_dot_product_attention.h"

namespace attend::nn {
namespace {

constexpr std::string_view kOp = "MultiheadAttention";

// [B, T, H * d_k] <-> [B, H, T, d_k]
Tensor split_heads(const Tensor& x, Index heads) {
  return permute(reshape(x, {x.size(0), x.size(1), heads, x.size(2) / heads}), {0, 2, 1, 3});
}
Tensor merge_heads(const Tensor& x) {
  Tensor by_position = permute(x, {0, 2, 1, 3});  // [B, T, H, d_k]
  return reshape(by_position, {x.size(0), x.size(2), x.size(1) * x.size(3)});
}

// The mask on the future within `new_positions` queries that follow `cached` earlier
// positions: query i may see keys 0 .. cached + i.
Mask causal_step_mask(Index new_positions, Index cached) {
  const Index keys = cached + new_positions;
  NDArray blocked = NDArray::zeros({new_positions, keys});
  float* b = blocked.data<float>();
  for (Index query = 0; query < new_positions; ++query)
    for (Index key = cached + query + 1; key < keys; ++key) b[query * keys + key] = 1.0f;
  return Mask::blocked(Tensor(blocked));
}

}  // namespace

MultiheadAttention::MultiheadAttention(Index embed_dim, Index num_heads,
                                       MultiheadAttentionOptions options, Generator& gen)
    : embed_dim(embed_dim),
      num_heads(num_heads),
      head_dim(num_heads > 0 ? embed_dim / num_heads : 0),
      dropout(options.dropout),
      batch_first(options.batch_first),
      out_proj(embed_dim, embed_dim, options.bias, gen),
      gen_(&gen) {
  if (num_heads < 1 || embed_dim < 1 || embed_dim % num_heads != 0)
    fail("{}: embed_dim {} must be a positive multiple of num_heads {}", kOp, embed_dim, num_heads);
  if (options.dropout < 0 || options.dropout >= 1)
    fail("{}: dropout must be in [0, 1), got {}", kOp, options.dropout);
  // PyTorch's initialisation: Xavier-uniform in_proj_weight (fan_in E, fan_out 3E), zero
  // biases, out_proj.weight as a Linear's.
  in_proj_weight =
      init::uniform({3 * embed_dim, embed_dim}, std::sqrt(6.0 / (4.0 * embed_dim)), gen);
  register_parameter("in_proj_weight", in_proj_weight);
  if (options.bias) {
    in_proj_bias = zeros({3 * embed_dim});
    register_parameter("in_proj_bias", in_proj_bias);
    out_proj.bias.data() = NDArray::zeros({embed_dim});
  }
  register_module("out_proj", out_proj);
}

Tensor MultiheadAttention::to_batch_first(const Tensor& x, std::string_view what) const {
  if (x.ndim() != 3 || x.size(2) != embed_dim)
    fail("{}: {} must be {} with E = {}, got {}", kOp, what,
         batch_first ? "[B, T, E]" : "[T, B, E]", embed_dim, x.shape());
  return batch_first ? x : transpose(x, 0, 1);
}

Tensor MultiheadAttention::from_batch_first(const Tensor& x) const {
  return batch_first ? x : transpose(x, 0, 1);
}

Tensor MultiheadAttention::project(const Tensor& x, int part) const {
  const Index E = embed_dim;
  Tensor weight = slice(in_proj_weight, 0, part * E, (part + 1) * E);
  Tensor bias =
      in_proj_bias.defined() ? slice(in_proj_bias, 0, part * E, (part + 1) * E) : Tensor();
  return split_heads(linear(x, weight, bias), num_heads);
}

MhaOutput MultiheadAttention::attend_heads(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const Mask& mask, bool need_weights, bool average) {
  SdpaOptions options{.attn_mask = mask,
                      .dropout_p = is_training() ? dropout : 0.0,
                      .generator = gen_,
                      .weights_hook = weights_hook};
  Attended heads = scaled_dot_product_attention(q, k, v, options);  // [B, H, Tq, d_k]
  MhaOutput out{out_proj(merge_heads(heads.context)), Tensor()};
  if (need_weights) out.weights = average ? mean(heads.weights, 1) : heads.weights;
  return out;
}

MhaOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const MhaForward& args) {
  Tensor q_in = to_batch_first(query, "query");
  Tensor k_in = to_batch_first(key, "key");
  Tensor v_in = to_batch_first(value, "value");
  const Index B = q_in.size(0), Tq = q_in.size(1), Tk = k_in.size(1);
  if (k_in.size(0) != B || v_in.size(0) != B || v_in.size(1) != Tk)
    fail("{}: query {}, key {} and value {} must share the batch, key and value the length", kOp,
         query.shape(), key.shape(), value.shape());

  Mask mask;
  const Shape scores{B, num_heads, Tq, Tk};
  if (args.attn_mask.defined()) {
    const Shape& s = args.attn_mask.shape();
    if (s.ndim() == 2 && s[0] == Tq && s[1] == Tk)
      mask = args.attn_mask;
    else if (s.ndim() == 3 && s[0] == B * num_heads && s[1] == Tq && s[2] == Tk)
      mask = args.attn_mask.reshaped(scores);
    else
      fail("{}: attn_mask must be [Tq, Tk] = [{}, {}] or [B * H, Tq, Tk] = [{}, {}, {}], got {}",
           kOp, Tq, Tk, B * num_heads, Tq, Tk, s);
  }
  if (args.key_padding_mask.defined()) {
    const Shape& s = args.key_padding_mask.shape();
    if (s.ndim() != 2 || s[0] != B || s[1] != Tk)
      fail("{}: key_padding_mask must be [B, Tk] = [{}, {}], got {}", kOp, B, Tk, s);
    mask = mask.combined_with(args.key_padding_mask.reshaped({B, 1, 1, Tk}));
  }
  if (args.is_causal) {
    if (Tq != Tk)
      fail("{}: is_causal needs Tq == Tk, got query {}, key {}", kOp, query.shape(), key.shape());
    mask = mask.combined_with(causal_mask(Tq));
  }

  // Nobody reads or changes the weights, nothing to drop out, no mask but the causal one: the
  // fused op (fused_attention.h) gives the same numbers for less time and memory.
  const bool dropping = dropout > 0 && is_training();
  if (!args.need_weights && !weights_hook && !dropping && !args.attn_mask.defined() &&
      !args.key_padding_mask.defined()) {
    const bool self_attention = query.node() == key.node() && key.node() == value.node();
    Tensor context = attend_fused(q_in, k_in, v_in, self_attention, args.is_causal);
    return {from_batch_first(out_proj(context)), Tensor()};
  }
  MhaOutput out = attend_heads(project(q_in, 0), project(k_in, 1), project(v_in, 2), mask,
                               args.need_weights, args.average_attn_weights);
  out.output = from_batch_first(out.output);
  return out;
}

Tensor MultiheadAttention::attend_fused(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                        bool self_attention, bool is_causal) const {
  const FusedAttentionOptions options{.is_causal = is_causal};
  // Self-attention (one tensor as query, key and value, as PyTorch tests with `is`): one
  // product with the whole in_proj_weight gives queries, keys and values side by side.
  if (self_attention)
    return fused_self_attention(linear(q_in, in_proj_weight, in_proj_bias), num_heads, options);
  auto project_part = [&](const Tensor& x, int part) {
    const Index E = embed_dim;
    Tensor weight = slice(in_proj_weight, 0, part * E, (part + 1) * E);
    Tensor bias =
        in_proj_bias.defined() ? slice(in_proj_bias, 0, part * E, (part + 1) * E) : Tensor();
    return linear(x, weight, bias);  // [B, T, E]: the heads side by side
  };
  return fused_attention(project_part(q_in, 0), project_part(k_in, 1), project_part(v_in, 2),
                         num_heads, options);
}

MhaOutput MultiheadAttention::forward_step(const Tensor& x, KeyValueCache& cache,
                                           bool need_weights) {
  Tensor x_in = to_batch_first(x, "x");
  Tensor k = project(x_in, 1), v = project(x_in, 2);
  if (cache.keys.defined()) {
    if (cache.keys.size(0) != x_in.size(0))
      fail("{}: forward_step got a batch of {} for a cache of {}", kOp, x_in.size(0),
           cache.keys.size(0));
    k = concat({cache.keys, k}, 2);
    v = concat({cache.values, v}, 2);
  }
  const Index new_positions = x_in.size(1), cached = cache.length();
  cache = {k, v};
  Mask mask = new_positions > 1 ? causal_step_mask(new_positions, cached) : Mask();
  MhaOutput out = attend_heads(project(x_in, 0), k, v, mask, need_weights, false);
  out.output = from_batch_first(out.output);
  return out;
}

KeyValueCache MultiheadAttention::cache_memory(const Tensor& memory) {
  Tensor m = to_batch_first(memory, "memory");
  return {project(m, 1), project(m, 2)};
}

MhaOutput MultiheadAttention::attend_cached(const Tensor& query, const KeyValueCache& memory,
                                            const Mask& key_padding_mask, bool need_weights) {
  Tensor q_in = to_batch_first(query, "query");
  const Index B = q_in.size(0), Tk = memory.length();
  Mask mask;
  if (key_padding_mask.defined()) {
    const Shape& s = key_padding_mask.shape();
    if (s.ndim() != 2 || s[0] != B || s[1] != Tk)
      fail("{}: key_padding_mask must be [B, Tk] = [{}, {}], got {}", kOp, B, Tk, s);
    mask = key_padding_mask.reshaped({B, 1, 1, Tk});
  }
  MhaOutput out =
      attend_heads(project(q_in, 0), memory.keys, memory.values, mask, need_weights, false);
  out.output = from_batch_first(out.output);
  return out;
}

std::string MultiheadAttention::describe() const {
  return fmt::format("MultiheadAttention(E {}, {} heads of {}{})", embed_dim, num_heads, head_dim,
                     batch_first ? ", batch_first" : "");
}

}  // namespace attend::nn
