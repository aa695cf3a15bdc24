// The Vision Transformer (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words:
// Transformers for Image Recognition at Scale", section 3.1): an image cut into P x P patches
// is read as a sequence of N = (S / P)^2 tokens, with one extra learned token in front whose
// final state is classified.
//
//   x_p^i       patch i flattened (C P^2 numbers), patches in row-major order
//   z_0 = [x_class; x_p^1 E; ...; x_p^N E] + E_pos       E [C P^2, D], E_pos [N + 1, D]  eq. (1)
//   z'_l = MSA(LN(z_{l-1})) + z_{l-1}                     l = 1..L                  eq. (2)
//   z_l  = MLP(LN(z'_l)) + z'_l                                                      eq. (3)
//   y    = LN(z_L^0)                                      the class token's state    eq. (4)
//   logits = heads(y)
//
// Eqs. (2)-(3) are a pre-norm Transformer encoder layer (nn::TransformerEncoderLayer with
// norm_first, batch_first, GELU in the MLP). Names and initialisation follow torchvision's
// VisionTransformer (torchvision/models/vision_transformer.py), so a learner can compare:
//
//   here                       torchvision                                  init
//   conv_proj                  conv_proj                                    N(0, 1/fan_in), bias 0
//   class_token [1, 1, D]      class_token                                  zeros
//   pos_embedding [1, T, D]    encoder.pos_embedding                        N(0, 0.02^2)
//   layers.i.norm1, .self_attn encoder.layers.encoder_layer_i.ln_1, .self_attention
//   layers.i.norm2             encoder.layers.encoder_layer_i.ln_2
//   layers.i.linear1, linear2  encoder.layers.encoder_layer_i.mlp.0, mlp.3
//   ln                         encoder.ln                                   ones, zeros
//   heads                      heads.head                                   see below
// (torchvision draws conv_proj from a normal truncated at 2 standard deviations; here the
// plain normal. Its MLP uses Xavier weights; here nn::Linear's default, as in PyTorch's
// nn.TransformerEncoderLayer.)
//
// The patch embedding E is a convolution with kernel = stride = P, as in torchvision: each
// output position sums over exactly one patch, so it IS "flatten the patch, multiply by E"
// (E = conv_proj.weight reshaped to [D, C P^2], the pixels in (channel, row, column) order),
// and the [B, D, S/P, S/P] output is the patch grid, flattened row-major into the N tokens.
// The convolution keeps torchvision's parameter layout and saves a reshape that would copy
// the image; the tests check that it equals the reshape + linear form.
//
// torchvision starts the head at zero. Here it keeps nn::Linear's default instead: with a zero
// head every gradient below it is zero, so a re-initialised model (the sanity checks of
// Adebayo et al. 2018, interpret/sanity.h) would have all-zero gradient maps.
//
// Reading the model. After forward(), in the graph (call retain_grad() on them before
// backward() to read their gradients):
//   patch_tokens           [B, N, D]   x_p^i E, the patch embeddings before E_pos
//   hidden_states          L + 1 tensors [B, T, D]: z_0 (embeddings), then each layer's output
//                          (HuggingFace's output_hidden_states). z_L's patch tokens do not
//                          reach the logits (only the class token is classified, after the
//                          last attention): Grad-CAM reads z_{L-1}, the last layer's input.
//   attention_weights()    L tensors [B, H, T, T], softmax(QK^T / sqrt(d_k)) of each layer,
//                          token 0 the class token; only when need_weights is on
// The images themselves can require a gradient: input saliency (interpret/saliency.h).
#pragma once

#include <memory>
#include <vector>

#include "nn/conv.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/transformer_layer.h"

namespace attend::nn {

struct VisionTransformerConfig {
  Index image_size = 224;  // S: images are [B, in_channels, S, S]
  Index patch_size = 16;   // P: S must be a multiple of it
  Index in_channels = 3;
  Index num_layers = 12;   // L
  Index num_heads = 12;    // H; hidden_dim must be a multiple of it
  Index hidden_dim = 768;  // D
  Index mlp_dim = 3072;    // the MLP's hidden width
  Index num_classes = 1000;
  double dropout = 0;            // after E_pos, on the attention weights and in every sub-layer
  double layer_norm_eps = 1e-6;  // torchvision's (PyTorch's LayerNorm default is 1e-5)
  // Keep every layer's attention weights (attention_weights()); off, the layers take the
  // fused attention path, faster for training. set_need_weights switches it later.
  bool need_weights = true;
};
// (The defaults are ViT-B/16 of the paper, Table 1.)

class VisionTransformer : public UnaryModule {
 public:
  explicit VisionTransformer(const VisionTransformerConfig& config = {},
                             Generator& gen = default_generator());

  // images [B, C, S, S] -> logits [B, num_classes]
  Tensor forward(const Tensor& images) override;
  // The two halves of forward(): images -> patch tokens [B, N, D] (eq. 1 without x_class and
  // E_pos), and patch tokens -> logits (everything after).
  Tensor embed_patches(const Tensor& images);
  Tensor forward_patches(const Tensor& patches);

  // The attention weights [B, H, T, T] of each layer in the last forward, layer 1 first.
  // Fails when need_weights is off.
  std::vector<Tensor> attention_weights() const;
  void set_need_weights(bool on);

  Index grid() const { return config_.image_size / config_.patch_size; }  // patches a side
  Index num_patches() const { return grid() * grid(); }                   // N
  Index num_tokens() const { return num_patches() + 1; }                  // T = N + 1
  const VisionTransformerConfig& config() const { return config_; }
  std::string describe() const override;

  Conv2d conv_proj;
  Tensor class_token;    // [1, 1, D]
  Tensor pos_embedding;  // [1, T, D]
  std::vector<std::unique_ptr<TransformerEncoderLayer>> layers;
  LayerNorm ln;
  Linear heads;

  // Of the last forward (see the header comment).
  Tensor patch_tokens;
  std::vector<Tensor> hidden_states;

 private:
  VisionTransformerConfig config_;
  Generator* gen_;
};

}  // namespace attend::nn
