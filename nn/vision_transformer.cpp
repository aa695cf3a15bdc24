#include "nn/vision_transformer.h"

#include <cmath>

#include "autograd/ops.h"
#include "nn/activation.h"
#include "nn/init.h"

namespace attend::nn {
namespace {

constexpr std::string_view kOp = "VisionTransformer";
// E_pos ~ N(0, 0.02^2), as torchvision (and BERT, GPT-2).
constexpr double kPositionStd = 0.02;

const VisionTransformerConfig& checked(const VisionTransformerConfig& c) {
  if (c.image_size < 1 || c.patch_size < 1 || c.image_size % c.patch_size != 0)
    fail("{}: image_size {} must be a positive multiple of patch_size {}", kOp, c.image_size,
         c.patch_size);
  if (c.in_channels < 1 || c.num_layers < 1 || c.num_classes < 1 || c.mlp_dim < 1)
    fail("{}: in_channels {}, num_layers {}, num_classes {} and mlp_dim {} must be at least 1", kOp,
         c.in_channels, c.num_layers, c.num_classes, c.mlp_dim);
  if (c.num_heads < 1 || c.hidden_dim < 1 || c.hidden_dim % c.num_heads != 0)
    fail("{}: hidden_dim {} must be a positive multiple of num_heads {}", kOp, c.hidden_dim,
         c.num_heads);
  if (c.dropout < 0 || c.dropout >= 1)
    fail("{}: dropout must be in [0, 1), got {}", kOp, c.dropout);
  return c;
}

TransformerLayerOptions layer_options(const VisionTransformerConfig& c) {
  return {.dim_feedforward = c.mlp_dim,
          .dropout = c.dropout,
          .activation = Activation::gelu,  // torchvision's MLPBlock: nn.GELU()
          .layer_norm_eps = c.layer_norm_eps,
          .batch_first = true,
          .norm_first = true,  // eqs. (2)-(3): LN before each sub-layer
          .bias = true,
          .need_weights = c.need_weights};
}

}  // namespace

VisionTransformer::VisionTransformer(const VisionTransformerConfig& config, Generator& gen)
    : conv_proj(checked(config).in_channels, config.hidden_dim, config.patch_size,
                /*stride=*/config.patch_size, /*padding=*/0, /*bias=*/true, gen),
      ln(config.hidden_dim, config.layer_norm_eps),
      heads(config.hidden_dim, config.num_classes, /*bias=*/true, gen),
      config_(config),
      gen_(&gen) {
  // torchvision: conv_proj.weight ~ N(0, 1 / fan_in) (truncated there), bias 0.
  const Index fan_in = config.in_channels * config.patch_size * config.patch_size;
  conv_proj.weight.data() = NDArray::normal(conv_proj.weight.shape(), gen, 0,
                                            std::sqrt(1.0 / static_cast<double>(fan_in)));
  conv_proj.bias.data() = NDArray::zeros({config.hidden_dim});
  class_token = zeros({1, 1, config.hidden_dim});
  pos_embedding = init::normal({1, num_tokens(), config.hidden_dim}, kPositionStd, gen);
  register_parameter("class_token", class_token);
  register_module("conv_proj", conv_proj);
  register_parameter("pos_embedding", pos_embedding);
  for (Index i = 0; i < config.num_layers; ++i) {
    layers.push_back(std::make_unique<TransformerEncoderLayer>(config.hidden_dim, config.num_heads,
                                                               layer_options(config), gen));
    register_module(fmt::format("layers.{}", i), *layers.back());
  }
  register_module("ln", ln);
  register_module("heads", heads);
}

Tensor VisionTransformer::embed_patches(const Tensor& images) {
  const Index size = config_.image_size;
  if (images.ndim() != 4 || images.size(1) != config_.in_channels || images.size(2) != size ||
      images.size(3) != size)
    fail("{}: expects images [B, {}, {}, {}], got {}", kOp, config_.in_channels, size, size,
         images.shape());
  // [B, D, S/P, S/P]: one D-vector per patch, x_p^i E (see the header) ...
  const Tensor grid = conv_proj(images);
  // ... flattened row-major into N tokens, [B, N, D] (torchvision's _process_input).
  return transpose(flatten(grid, 2), 1, 2);
}

Tensor VisionTransformer::forward_patches(const Tensor& patches) {
  const Index dim = config_.hidden_dim;
  if (patches.ndim() != 3 || patches.size(1) != num_patches() || patches.size(2) != dim)
    fail("{}: expects patch tokens [B, {}, {}], got {}", kOp, num_patches(), dim, patches.shape());
  const Index batch = patches.size(0);
  // Eq. (1): the class token in front, then the position of every token added.
  const Tensor cls = broadcast_to(class_token, {batch, 1, dim});
  Tensor z = concat({cls, patches}, 1) + pos_embedding;
  z = dropout(z, config_.dropout, is_training(), *gen_);
  hidden_states = {z};
  for (auto& layer : layers) {
    z = (*layer)(z);  // eqs. (2)-(3)
    hidden_states.push_back(z);
  }
  // Eq. (4): only the class token's final state is classified.
  const Tensor y = ln(squeeze(slice(z, 1, 0, 1), 1));
  return heads(y);
}

Tensor VisionTransformer::forward(const Tensor& images) {
  patch_tokens = embed_patches(images);
  return forward_patches(patch_tokens);
}

std::vector<Tensor> VisionTransformer::attention_weights() const {
  std::vector<Tensor> weights;
  for (const auto& layer : layers) {
    if (!layer->self_attention_weights.defined())
      fail(
          "{}: no attention weights kept: run forward() with need_weights on "
          "(set_need_weights(true))",
          kOp);
    weights.push_back(layer->self_attention_weights);
  }
  return weights;
}

void VisionTransformer::set_need_weights(bool on) {
  config_.need_weights = on;
  for (auto& layer : layers) {
    layer->set_need_weights(on);
    if (!on) layer->self_attention_weights = Tensor();
  }
}

std::string VisionTransformer::describe() const {
  return fmt::format(
      "VisionTransformer({}x{} images, {}x{} patches, {} layers, {} heads, D {}, "
      "MLP {}, {} classes)",
      config_.image_size, config_.image_size, config_.patch_size, config_.patch_size,
      config_.num_layers, config_.num_heads, config_.hidden_dim, config_.mlp_dim,
      config_.num_classes);
}

}  // namespace attend::nn
