// (a) The Vision Transformer on the canvases. nn/vision_transformer.h is the model (Dosovitskiy
// et al. 2021); here it gets the lesson's sizes and a standardised input, and the helpers of
// the sanity checks: labels shuffled across canvases, parameters copied by name.
#include <algorithm>
#include <cmath>

#include "images.h"

namespace attend::lesson13 {

nn::VisionTransformerConfig vit_config(const Options& o, Index canvas_size, Index classes) {
  return {.image_size = canvas_size,
          .patch_size = o.vit_patch,
          .in_channels = 3,
          .num_layers = o.vit_layers,
          .num_heads = o.vit_heads,
          .hidden_dim = o.vit_dim,
          .mlp_dim = o.vit_mlp,
          .num_classes = classes,
          .dropout = 0,  // a few thousand canvases, a few epochs: underfitting, not overfitting
          .need_weights = false};
}

vision::PixelStatistics pixel_statistics(const NDArray& images) {
  if (images.numel() == 0 || images.dtype() != kFloat32)
    fail("pixel_statistics: expects float32 pixels, got {} {}", dtype_name(images.dtype()),
         images.shape());
  // Sums of x and x^2 in float64: var = E[x^2] - E[x]^2 loses nothing that matters for
  // pixels in [0, 1], even over millions of them.
  double sum = 0, squares = 0;
  for (const float v : images.span<float>()) {
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  const auto n = static_cast<double>(images.numel());
  const double mean = sum / n, variance = std::max(0.0, squares / n - mean * mean);
  return {mean, variance > 0 ? std::sqrt(variance) : 1.0};
}

CanvasVit::CanvasVit(const nn::VisionTransformerConfig& config, vision::PixelStatistics pixels,
                     Generator& gen)
    : vit(config, gen), pixels(pixels) {
  if (!(pixels.std > 0)) fail("CanvasVit: the pixels' std must be positive, got {}", pixels.std);
  register_module("vit", vit);
}

Tensor CanvasVit::forward(const Tensor& images) {
  return vit((images - pixels.mean) / pixels.std);
}

vision::CanvasSet with_shuffled_labels(const vision::CanvasSet& set, std::uint64_t seed) {
  Generator gen(seed);
  const std::vector<Index> order = gen.permutation(set.size());
  vision::CanvasSet shuffled = set;  // the images and objects are shared
  const std::vector<std::int64_t> rows(order.begin(), order.end());
  shuffled.labels = index_select(set.labels, 0, NDArray::from_vector(rows, {set.size()}));
  return shuffled;
}

namespace {

bool starts_with_component(const std::string& name, const std::string& prefix) {
  return name == prefix ||
         (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
          name[prefix.size()] == '.');
}

}  // namespace

Index copy_parameters(nn::Module& to, const nn::Module& from,
                      const std::vector<std::string>& prefixes) {
  const auto source = from.named_parameters();
  Index copied = 0;
  for (auto& [name, parameter] : to.named_parameters()) {
    const bool selected =
        prefixes.empty() || std::any_of(prefixes.begin(), prefixes.end(), [&](const auto& p) {
          return starts_with_component(name, p);
        });
    if (!selected) continue;
    const auto match = std::find_if(source.begin(), source.end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (match == source.end() || match->second.shape() != parameter.shape())
      fail("copy_parameters: '{}' {} has no parameter of that name and shape to copy from", name,
           parameter.shape());
    parameter.data() = match->second.data().clone();
    ++copied;
  }
  return copied;
}

}  // namespace attend::lesson13
