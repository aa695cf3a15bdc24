// The encoder-decoder Transformer of Vaswani et al. (2017, section 3 and figure 1), on the
// encoder-decoder interface of seq/model.h, so that teacher forcing, the training loop,
// greedy decoding, beam search and the date evaluation written for RNNsearch run it as they
// are. Lesson 11 teaches it on the date task.
//
//   source ids [B, S] -> E x * sqrt(d_model) + PE -> N encoder layers        -> memory [B, S, D]
//   <bos> y_1 ..      -> E y * sqrt(d_model) + PE -> N decoder layers (causal
//                        self-attention, attention to the memory)          -> [B, T, D]
//                     -> Linear(D -> V)                                    -> logits [B, T, V]
//
// Training reads all T target positions in one pass (decode_all): the causal mask hides
// position t+1.. from position t, so one pass computes what T steps would. Decoding goes one
// position at a time (step), with a key/value cache or, for checking it, by recomputing the
// whole prefix at every step: both give the same outputs (tested).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/positional_encoding.h"
#include "nn/transformer_layer.h"
#include "seq/model.h"

namespace attend::seq {

// How a token learns where it is (section 3.5): not at all (attention alone sees a set,
// not a sequence), the paper's fixed sines and cosines, or a learned vector per position.
enum class Positions { kNone, kSinusoidal, kLearned };
Positions parse_positions(const std::string& name);  // "none", "sinusoidal" or "learned"
std::string positions_name(Positions positions);

struct TransformerSizes {
  Index source_vocabulary = 0;
  Index target_vocabulary = 0;
  Index d_model = 64;       // D, the width of every position's vector
  Index heads = 4;          // h; each head attends in d_k = D / h dimensions
  Index layers = 2;         // N encoder layers and N decoder layers
  Index feedforward = 256;  // d_ff, the inner size of the position-wise FFN
  Index max_length = 64;    // the longest source or target the positions cover
  double dropout = 0.1;     // P_drop (section 5.4)
  bool norm_first = false;  // false: the paper's post-norm; true: pre-norm
  Positions positions = Positions::kSinusoidal;
  bool tie_output = false;  // the output projection shares the target embedding's matrix
};

// Per layer, the attention weights of one pass, per head and in the graph.
struct TransformerAttention {
  std::vector<Tensor> encoder_self;  // [B, H, S, S] per encoder layer
  std::vector<Tensor> decoder_self;  // [B, H, T, T] per decoder layer
  std::vector<Tensor> cross;         // [B, H, T, S] per decoder layer: target -> source
};

class TransformerSeq2Seq : public Seq2SeqModel {
 public:
  explicit TransformerSeq2Seq(const TransformerSizes& sizes, Generator& gen = default_generator());

  // memory = the encoder's output; keys = every decoder layer's keys and values of the
  // memory, projected once [B, 2N, H, S, d_k] (the cross-attention part of the cache);
  // initial_state undefined (nothing decoded yet).
  Encoded encode(const Tensor& source, const Tensor& mask) override;
  // The next position. The state is, with the cache, every decoder layer's self-attention
  // keys and values so far [B, 2N, H, t, d_k]; without it, the tokens so far [B, t]. The
  // weights are the last decoder layer's cross-attention averaged over its heads [B, S].
  DecoderStep step(const Encoded& encoded, const Tensor& previous_state,
                   const Tensor& previous_tokens) override;
  // All T positions at once, with a causal mask on the decoder's self-attention.
  DecoderSteps decode_all(const Encoded& encoded, const Tensor& decoder_input) override;
  Tensor output_layer(const Tensor& features) override;  // [..., D] -> [..., V]
  bool has_attention() const override { return true; }
  std::string describe() const override;

  // The attention weights of every layer and head when the decoder is fed decoder_input
  // (<bos> y_1 .. y_n, e.g. a decoded output): row i of a cross-attention map is where the
  // decoder looked while producing y_{i+1} (<eos> after y_n). No graph is recorded.
  TransformerAttention attention_maps(const Tensor& source, const Tensor& mask,
                                      const Tensor& decoder_input);

  const TransformerSizes& sizes() const { return sizes_; }
  bool use_cache = true;  // step(): the key/value cache, or recompute the whole prefix

  nn::Embedding source_embedding, target_embedding;
  // Learned positions, [max_length, D] each (only with Positions::kLearned).
  std::unique_ptr<nn::LearnedPositionalEmbedding> source_positions, target_positions;
  std::vector<std::unique_ptr<nn::TransformerEncoderLayer>> encoder_layers;
  std::vector<std::unique_ptr<nn::TransformerDecoderLayer>> decoder_layers;
  // Pre-norm leaves the last layer's output un-normalised: a final LayerNorm on each side
  // (as nn.Transformer); post-norm layers already end with one, so there are none.
  std::unique_ptr<nn::LayerNorm> encoder_norm, decoder_norm;
  nn::Linear output;  // W [V, D]: the target embedding's matrix itself when tied

 private:
  // E ids * sqrt(D) + the positions start .. start + T - 1: [B, T] -> [B, T, D].
  Tensor embed(const Tensor& ids, bool source, Index start);
  TransformerSizes sizes_;
  Tensor sinusoids_;  // nn::sinusoidal_positions(max_length, D): not a parameter
};

// A tiny model for gradchecks and tests (D 8, 2 heads, 1+1 layers, d_ff 12, no dropout).
TransformerSizes tiny_transformer_sizes(Index vocabulary);

}  // namespace attend::seq
