// The three models of lesson 12: the GPT, the GRU language model it is compared with, and
// the attention-only model of the induction task.
#include <cmath>
#include <numeric>

#include "lesson.h"

namespace attend::lesson12 {

namespace {

// int64 [T]: first, first + 1, ..., first + T - 1
Tensor positions(Index first, Index count) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(count));
  std::iota(p.begin(), p.end(), first);
  return Tensor(NDArray::from_vector(p, {count}));
}

nn::TransformerLayerOptions block_options(const GptConfig& c) {
  return {.dim_feedforward = c.feedforward > 0 ? c.feedforward : 4 * c.d_model,
          .dropout = 0,  // ~4M characters and minutes of training: no overfitting to fight
          .activation = nn::Activation::gelu,
          .batch_first = true,
          .norm_first = true,  // pre-norm, as GPT-2
          .bias = true,
          .need_weights = false};  // training takes the fused attention; see forward_with_weights
}

}  // namespace

// ---- GPT -------------------------------------------------------------------------------------

Gpt::Gpt(const GptConfig& c, Generator& gen)
    : config(c),
      token(c.vocabulary, c.d_model, nn::kNoPadding, gen),
      position(c.context, c.d_model, nn::kNoPadding, gen),
      final_norm(c.d_model),
      head(c.d_model, c.vocabulary, true, gen) {
  register_module("token", token);
  register_module("position", position);
  for (Index i = 0; i < c.layers; ++i) {
    blocks.push_back(
        std::make_unique<nn::TransformerEncoderLayer>(c.d_model, c.heads, block_options(c), gen));
    register_module(fmt::format("blocks.{}", i), *blocks.back());
  }
  register_module("final_norm", final_norm);
  register_module("head", head);
}

Tensor Gpt::embed(const Tensor& ids, Index first_position) {
  if (ids.ndim() != 2 || first_position + ids.size(1) > config.context)
    fail("Gpt: ids {} from position {}: at most {} positions (the context)", ids.shape(),
         first_position, config.context);
  // x_t = E[token_t] + P[t]: the same character at two places gets two different vectors.
  return token(ids) + position(positions(first_position, ids.size(1)));
}

Tensor Gpt::forward(const Tensor& ids) {
  Tensor x = embed(ids, 0);
  for (auto& block : blocks) x = (*block)(x, {}, {}, /*is_causal=*/true);
  return head(final_norm(x));
}

Tensor Gpt::forward_step(const Tensor& ids, std::vector<nn::KeyValueCache>& caches) {
  caches.resize(blocks.size());
  Tensor x = embed(ids, caches[0].length());
  for (std::size_t i = 0; i < blocks.size(); ++i) x = blocks[i]->forward_step(x, caches[i]);
  return head(final_norm(x));
}

Tensor Gpt::forward_with_weights(const Tensor& ids) {
  // The cached path keeps every block's weights; from an empty cache it computes exactly
  // forward()'s causal attention (the tests check it).
  std::vector<nn::KeyValueCache> caches;
  return forward_step(ids, caches);
}

std::vector<Tensor> Gpt::attention_weights() const {
  std::vector<Tensor> weights;
  for (const auto& block : blocks) weights.push_back(block->self_attention_weights);
  return weights;
}

std::string Gpt::describe() const {
  return fmt::format("GPT(vocabulary {}, context {}, d_model {}, {} layers, {} heads)",
                     config.vocabulary, config.context, config.d_model, config.layers,
                     config.heads);
}

// ---- GRU language model ----------------------------------------------------------------------

constexpr Index kGruEmbedding = 64;

GruLm::GruLm(Index vocabulary, Index hidden, Generator& gen)
    : embedding(vocabulary, kGruEmbedding, nn::kNoPadding, gen),
      gru(kGruEmbedding, hidden, false, gen),
      head(hidden, vocabulary, true, gen) {
  register_module("embedding", embedding);
  register_module("gru", gru);
  register_module("head", head);
}

Tensor GruLm::forward(const Tensor& ids) {
  return head(gru(embedding(ids)).output);
}

std::string GruLm::describe() const {
  return fmt::format("GRU LM(vocabulary {}, hidden {})", embedding.weight.size(0),
                     gru.forward_cell.hidden_size());
}

Index gru_hidden_for(Index vocabulary, Index parameters) {
  // V*64 (embedding) + 3H*64 + 3H*H + 6H (GRU) + H*V + V (read-out) = parameters
  const double a = 3, b = 3.0 * kGruEmbedding + 6 + static_cast<double>(vocabulary),
               c = static_cast<double>(vocabulary * kGruEmbedding + vocabulary - parameters);
  return std::max<Index>(1, std::llround((-b + std::sqrt(b * b - 4 * a * c)) / (2 * a)));
}

// ---- attention only --------------------------------------------------------------------------

AttentionOnly::AttentionOnly(Index vocabulary, Index context, Index d_model, Index layers,
                             Index heads, Generator& gen)
    : token(vocabulary, d_model, nn::kNoPadding, gen),
      position(context, d_model, nn::kNoPadding, gen),
      final_norm(d_model),
      head(d_model, vocabulary, true, gen) {
  register_module("token", token);
  register_module("position", position);
  for (Index i = 0; i < layers; ++i) {
    norms.push_back(std::make_unique<nn::LayerNorm>(d_model));
    attention.push_back(std::make_unique<nn::MultiheadAttention>(
        d_model, heads, nn::MultiheadAttentionOptions{.batch_first = true}, gen));
    register_module(fmt::format("norms.{}", i), *norms.back());
    register_module(fmt::format("attention.{}", i), *attention.back());
  }
  register_module("final_norm", final_norm);
  register_module("head", head);
}

Tensor AttentionOnly::forward(const Tensor& ids) {
  Tensor x = token(ids) + position(positions(0, ids.size(1)));
  weights.clear();
  for (std::size_t i = 0; i < attention.size(); ++i) {
    const Tensor h = (*norms[i])(x);
    nn::MhaOutput a = (*attention[i])(h, h, h,
                                      {.key_padding_mask = {},
                                       .need_weights = true,
                                       .attn_mask = {},
                                       .average_attn_weights = false,
                                       .is_causal = true});
    weights.push_back(a.weights);
    x = x + a.output;
  }
  return head(final_norm(x));
}

}  // namespace attend::lesson12
