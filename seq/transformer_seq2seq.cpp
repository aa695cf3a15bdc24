// The encoder-decoder Transformer (Vaswani et al. 2017) on seq/'s encoder-decoder interface.
#include "seq/transformer_seq2seq.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "nn/data/vocabulary.h"
#include "nn/init.h"
#include "tensor/error.h"

namespace attend::seq {
namespace {

using data::Vocabulary;
using nn::Mask;

// Part `i` of a packed [B, 2N, H, T, d_k] tensor: [B, H, T, d_k].
Tensor part(const Tensor& packed, Index i) {
  return squeeze(slice(packed, 1, i, i + 1), 1);
}

nn::TransformerLayerOptions layer_options(const TransformerSizes& s) {
  return {.dim_feedforward = s.feedforward,
          .dropout = s.dropout,
          .batch_first = true,
          .norm_first = s.norm_first};
}

// The embeddings start at N(0, 1/D), so that E x * sqrt(D) has unit variance, the scale of
// the positional encoding (fairseq and tensor2tensor do the same). nn::Embedding's N(0, 1)
// times sqrt(D) = 8 would drown the positions, whose entries lie in [-1, 1].
void scale_embedding(nn::Embedding& embedding, Index d_model, Generator& gen) {
  NDArray weight = nn::init::normal(embedding.weight.shape(), 1.0 / std::sqrt(d_model), gen).data();
  float* pad_row = weight.data<float>() + Vocabulary::kPad * d_model;
  std::fill(pad_row, pad_row + d_model, 0.0f);
  embedding.weight.data() = weight;
}

}  // namespace

Positions parse_positions(const std::string& name) {
  if (name == "none") return Positions::kNone;
  if (name == "sinusoidal") return Positions::kSinusoidal;
  if (name == "learned") return Positions::kLearned;
  fail("--positions: '{}' is not a positional encoding (none, sinusoidal or learned)", name);
}

std::string positions_name(Positions positions) {
  switch (positions) {
    case Positions::kNone:
      return "none";
    case Positions::kSinusoidal:
      return "sinusoidal";
    case Positions::kLearned:
      return "learned";
  }
  return "?";
}

TransformerSeq2Seq::TransformerSeq2Seq(const TransformerSizes& sizes, Generator& gen)
    : source_embedding(sizes.source_vocabulary, sizes.d_model, Vocabulary::kPad, gen),
      target_embedding(sizes.target_vocabulary, sizes.d_model, Vocabulary::kPad, gen),
      output(sizes.d_model, sizes.target_vocabulary, /*bias=*/true, gen),
      sizes_(sizes) {
  if (sizes.layers < 1) fail("TransformerSeq2Seq: at least one layer, got {}", sizes.layers);
  if (sizes.max_length < 1)
    fail("TransformerSeq2Seq: max_length must be at least 1, got {}", sizes.max_length);
  scale_embedding(source_embedding, sizes.d_model, gen);
  scale_embedding(target_embedding, sizes.d_model, gen);
  register_module("source_embedding", source_embedding);
  register_module("target_embedding", target_embedding);
  if (sizes.positions == Positions::kSinusoidal)
    sinusoids_ = nn::sinusoidal_positions(sizes.max_length, sizes.d_model);
  if (sizes.positions == Positions::kLearned) {
    source_positions =
        std::make_unique<nn::LearnedPositionalEmbedding>(sizes.max_length, sizes.d_model, gen);
    target_positions =
        std::make_unique<nn::LearnedPositionalEmbedding>(sizes.max_length, sizes.d_model, gen);
    register_module("source_positions", *source_positions);
    register_module("target_positions", *target_positions);
  }
  for (Index l = 0; l < sizes.layers; ++l) {
    encoder_layers.push_back(std::make_unique<nn::TransformerEncoderLayer>(
        sizes.d_model, sizes.heads, layer_options(sizes), gen));
    register_module("encoder.layers." + std::to_string(l), *encoder_layers.back());
  }
  for (Index l = 0; l < sizes.layers; ++l) {
    decoder_layers.push_back(std::make_unique<nn::TransformerDecoderLayer>(
        sizes.d_model, sizes.heads, layer_options(sizes), gen));
    register_module("decoder.layers." + std::to_string(l), *decoder_layers.back());
  }
  if (sizes.norm_first) {
    encoder_norm = std::make_unique<nn::LayerNorm>(sizes.d_model);
    decoder_norm = std::make_unique<nn::LayerNorm>(sizes.d_model);
    register_module("encoder.norm", *encoder_norm);
    register_module("decoder.norm", *decoder_norm);
  }
  // Tied, the output scores a token by the dot product of the decoder's vector with the
  // token's own embedding (section 3.4); registered after the embedding, the shared matrix
  // is listed (and counted) once, as target_embedding.weight.
  if (sizes.tie_output) nn::tie_weights(output, target_embedding);
  register_module("output", output);
}

Tensor TransformerSeq2Seq::embed(const Tensor& ids, bool source, Index start) {
  const Index length = ids.size(1);
  if (start + length > sizes_.max_length)
    fail("TransformerSeq2Seq: a {} of {} positions from position {} is longer than max_length {}",
         source ? "source" : "target", length, start, sizes_.max_length);
  nn::Embedding& embedding = source ? source_embedding : target_embedding;
  Tensor x = embedding(ids) * std::sqrt(static_cast<double>(sizes_.d_model));  // section 3.4
  Tensor table = sizes_.positions == Positions::kSinusoidal ? sinusoids_
                 : sizes_.positions == Positions::kLearned
                     ? (source ? source_positions : target_positions)->weight
                     : Tensor();
  if (!table.defined()) return x;
  if (table.dtype() != x.dtype()) table = to_dtype(table, x.dtype());
  return x + slice(table, 0, start, start + length);  // [T, D] broadcast over the batch
}

Encoded TransformerSeq2Seq::encode(const Tensor& source, const Tensor& mask) {
  Tensor x = embed(source, /*source=*/true, 0);
  const Mask padding = Mask::keep(mask);  // padded source positions are never attended to
  for (auto& layer : encoder_layers) x = (*layer)(x, {}, padding);
  if (encoder_norm) x = (*encoder_norm)(x);
  Encoded encoded;
  encoded.memory = x;
  encoded.mask = mask;
  // Decoding reads the memory's keys and values at every step: project them once. Training
  // (decode_all) does not need them, so they are made in evaluation mode only.
  if (!is_training()) {
    std::vector<Tensor> kv;
    for (auto& layer : decoder_layers) {
      nn::KeyValueCache memory = layer->multihead_attn.cache_memory(x);
      kv.push_back(memory.keys);
      kv.push_back(memory.values);
    }
    encoded.keys = stack(kv, 1);  // [B, 2N, H, S, d_k]
  }
  return encoded;
}

DecoderSteps TransformerSeq2Seq::decode_all(const Encoded& encoded, const Tensor& decoder_input) {
  Tensor x = embed(decoder_input, /*source=*/false, 0);
  // The causal mask keeps position t from reading positions after it, the target's own
  // future. The target's padding needs no mask of its own: it comes after every real token,
  // so the causal mask already hides it from them.
  nn::DecoderMasks masks;
  masks.memory_key_padding_mask = Mask::keep(encoded.mask);
  masks.tgt_is_causal = true;
  for (auto& layer : decoder_layers) x = (*layer)(x, encoded.memory, masks);
  if (decoder_norm) x = (*decoder_norm)(x);
  return {x, mean(decoder_layers.back()->cross_attention_weights, 1)};  // heads averaged
}

DecoderStep TransformerSeq2Seq::step(const Encoded& encoded, const Tensor& previous_state,
                                     const Tensor& previous_tokens) {
  const Tensor newest = unsqueeze(previous_tokens, 1);  // [B, 1]
  if (!use_cache) {
    // Without a cache: the whole prefix again, of which only the last position is new.
    const Tensor tokens = previous_state.defined() ? concat({previous_state, newest}, 1) : newest;
    DecoderSteps all = decode_all(encoded, tokens);
    const Index t = tokens.size(1);
    return {tokens, squeeze(slice(all.features, 1, t - 1, t), 1),
            squeeze(slice(all.weights, 1, t - 1, t), 1)};
  }
  // With the cache: one position through every layer, which attends to the keys and values
  // the earlier positions left in the cache.
  const Index t = previous_state.defined() ? previous_state.size(3) : 0;
  Tensor x = embed(newest, /*source=*/false, t);  // [B, 1, D] at position t
  const Mask padding = Mask::keep(encoded.mask);
  std::vector<Tensor> state;
  for (std::size_t l = 0; l < decoder_layers.size(); ++l) {
    const Index i = 2 * static_cast<Index>(l);
    nn::DecoderLayerCache cache;
    if (previous_state.defined())
      cache.self = {part(previous_state, i), part(previous_state, i + 1)};
    cache.memory = encoded.keys.defined()
                       ? nn::KeyValueCache{part(encoded.keys, i), part(encoded.keys, i + 1)}
                       : decoder_layers[l]->multihead_attn.cache_memory(encoded.memory);
    cache.memory_key_padding_mask = padding;
    x = decoder_layers[l]->forward_step(x, cache);
    state.push_back(cache.self.keys);
    state.push_back(cache.self.values);
  }
  if (decoder_norm) x = (*decoder_norm)(x);
  const Tensor weights = mean(decoder_layers.back()->cross_attention_weights, 1);  // [B, 1, S]
  return {stack(state, 1), squeeze(x, 1), squeeze(weights, 1)};
}

Tensor TransformerSeq2Seq::output_layer(const Tensor& features) {
  return output(features);
}

TransformerAttention TransformerSeq2Seq::attention_maps(const Tensor& source, const Tensor& mask,
                                                        const Tensor& decoder_input) {
  NoGradGuard no_graph;
  decode_all(encode(source, mask), decoder_input);
  TransformerAttention maps;
  for (auto& layer : encoder_layers) maps.encoder_self.push_back(layer->self_attention_weights);
  for (auto& layer : decoder_layers) {
    maps.decoder_self.push_back(layer->self_attention_weights);
    maps.cross.push_back(layer->cross_attention_weights);
  }
  return maps;
}

std::string TransformerSeq2Seq::describe() const {
  return fmt::format(
      "TransformerSeq2Seq({}+{} layers, d_model {}, {} heads, d_ff {}, {}, {} "
      "positions{})",
      sizes_.layers, sizes_.layers, sizes_.d_model, sizes_.heads, sizes_.feedforward,
      sizes_.norm_first ? "pre-norm" : "post-norm", positions_name(sizes_.positions),
      sizes_.tie_output ? ", tied output" : "");
}

TransformerSizes tiny_transformer_sizes(Index vocabulary) {
  return {.source_vocabulary = vocabulary,
          .target_vocabulary = vocabulary,
          .d_model = 8,
          .heads = 2,
          .layers = 1,
          .feedforward = 12,
          .max_length = 16,
          .dropout = 0.0};
}

}  // namespace attend::seq
