// (b) Every method's map of a (canvas, class) pair. One forward and one backward of the ViT
// give them all: the attention weights of every layer and their gradients (rollout, flow,
// relevance, raw attention), the last layer's input tokens and their gradients (Grad-CAM),
// and the gradient with respect to the pixels (saliency). The maths of each method is the
// library's (interpret/); here the model's tensors are cut into its inputs.
//
// A ViT's explanation is the class token's row: token 0 is the class token, and its weights
// (or rollout, flow, relevance) over tokens 1..N, one per patch, form the grid x grid map.
#include <algorithm>
#include <cmath>

#include "images.h"

namespace attend::lesson13 {
namespace {

// Images per forward and backward pass in model_maps: each pass keeps the ViT's attention
// and lesson 08's CNN's activations (about 3 MB an image at 64x64) until its maps are made.
constexpr Index kMapImages = 10;

// [B, C] one-hot of each image's class, to pick logit[b, c_b] by a product.
NDArray chosen_classes(const std::vector<Index>& classes, Index count, DType dtype) {
  const std::vector<std::int64_t> ids(classes.begin(), classes.end());
  return one_hot(NDArray::from_vector(ids, {static_cast<Index>(ids.size())}), count, dtype);
}

// Writes the patch entries 1..N of a class-token row (the row's entry 0 is the class token
// itself) into map b of maps [B, g, g].
void put_patch_row(NDArray& maps, Index b, std::span<const double> row) {
  const Index patches = maps.size(1) * maps.size(2);
  double* out = maps.data<double>() + b * patches;
  std::copy(row.begin() + 1, row.begin() + 1 + patches, out);
}

std::vector<double> row_of(const NDArray& matrix, Index row) {  // matrix [T, T]
  const Index width = matrix.size(1);
  const std::vector<double> values = matrix.to_vector();
  return {values.begin() + row * width, values.begin() + (row + 1) * width};
}

// Example b of every layer's [B, H, T, T]: [H, T, T] per layer, as interpret/ takes them.
std::vector<NDArray> example(const std::vector<NDArray>& layers, Index b) {
  std::vector<NDArray> out;
  for (const NDArray& layer : layers) out.push_back(squeeze(slice(layer, 0, b, b + 1), 0));
  return out;
}

// The attention-based maps of example b: raw last layer (per head and mean), rollout (mean
// and max fusion), flow, relevance.
void attention_maps(MapBatch& out, Index b, const std::vector<NDArray>& weights,
                    const std::vector<NDArray>& gradients, bool with_flow) {
  const std::vector<NDArray> layers = example(weights, b);
  const NDArray& last = layers.back();  // [H, T, T]
  const Index heads = last.size(0);
  for (Index h = 0; h < heads; ++h)
    put_patch_row(out.maps[static_cast<std::size_t>(kMethods + h)], b,
                  row_of(squeeze(slice(last, 0, h, h + 1), 0), 0));
  put_patch_row(out.maps[kRawMean], b,
                row_of(interpret::fuse_heads(last, interpret::HeadFusion::kMean), 0));
  put_patch_row(out.maps[kRollout], b,
                row_of(interpret::attention_rollout(layers, interpret::HeadFusion::kMean), 0));
  put_patch_row(out.maps[kRolloutMax], b,
                row_of(interpret::attention_rollout(layers, interpret::HeadFusion::kMax), 0));
  put_patch_row(out.maps[kRelevance], b,
                row_of(interpret::attention_relevance(layers, example(gradients, b)), 0));
  if (with_flow)
    put_patch_row(out.maps[kFlow], b, interpret::attention_flow_from(layers, 0).to_vector());
}

// Grad-CAM on tokens: the patch tokens of z_{L-1} (the last layer's input; z_L's patch tokens
// do not reach the logits, see nn/vision_transformer.h) as a D-channel grid, [B, D, g, g].
NDArray token_grid(const NDArray& tokens, Index grid) {
  const NDArray patches = slice(tokens, 1, 1, tokens.size(1));  // [B, N, D]
  return permute(patches, {0, 2, 1}).reshape({tokens.size(0), tokens.size(2), grid, grid});
}

}  // namespace

Index method_count(Index heads) {
  return kMethods + heads;
}

std::string method_name(Index row) {
  static const char* const names[kMethods] = {"raw attention (mean of heads)",
                                              "rollout (mean of heads)",
                                              "rollout (max of heads)",
                                              "attention flow",
                                              "relevance (Chefer 2021b)",
                                              "Grad-CAM on tokens",
                                              "gradient",
                                              "input x gradient",
                                              "random map",
                                              "edges of the canvas",
                                              "CNN: CAM",
                                              "CNN: Grad-CAM 16x16"};
  if (row < 0) fail("method_name: no row {}", row);
  if (row >= kMethods) return fmt::format("raw attention (head {})", row - kMethods + 1);
  return names[row];
}

bool uses_cnn(Index row) {
  return row == kCnnCam || row == kCnnGradCam;
}

bool model_independent(Index row) {
  return row == kRandom || row == kEdge;
}

NDArray map_of(const NDArray& maps, Index b) {
  return squeeze(slice(maps, 0, b, b + 1), 0).to(kFloat64);
}

MapBatch vit_maps(CanvasVit& model, const NDArray& images, const std::vector<Index>& classes,
                  const std::vector<bool>& flow) {
  nn::VisionTransformer& vit = model.vit;
  const Index batch = images.size(0), grid = vit.grid(), heads = vit.config().num_heads;
  if (static_cast<Index>(classes.size()) != batch)
    fail("vit_maps: {} images but {} classes (one per image)", batch, classes.size());
  const bool kept = vit.config().need_weights;
  vit.set_need_weights(true);
  const Tensor x(images, /*requires_grad=*/true);
  const Tensor logits = model(x);
  std::vector<Tensor> attention = vit.attention_weights();
  for (Tensor& a : attention) a.retain_grad();
  Tensor before_last = vit.hidden_states[vit.hidden_states.size() - 2];  // z_{L-1}
  before_last.retain_grad();
  // y = sum over b of logit[b, c_b]: image b's logit depends on image b only, so one backward
  // gives each image's gradients of its own class score (before the sigmoid).
  sum(logits * Tensor(chosen_classes(classes, logits.size(1), logits.dtype()))).backward();
  model.zero_grad();  // the parameters' gradients are not wanted here
  vit.set_need_weights(kept);

  std::vector<NDArray> weights, gradients;
  for (const Tensor& a : attention) {
    weights.push_back(a.data());
    gradients.push_back(a.grad().data());
  }
  MapBatch out;
  out.maps.assign(static_cast<std::size_t>(method_count(heads)), NDArray());
  for (Index row = 0; row < method_count(heads); ++row)
    if (row < kGradCam || row >= kMethods)
      out.maps[static_cast<std::size_t>(row)] = NDArray::zeros({batch, grid, grid}, kFloat64);
  const bool any_flow = std::find(flow.begin(), flow.end(), true) != flow.end();
  if (!any_flow) out.maps[kFlow] = NDArray();
  for (Index b = 0; b < batch; ++b)
    attention_maps(out, b, weights, gradients, any_flow && flow.at(static_cast<std::size_t>(b)));
  out.maps[kGradCam] = interpret::grad_cam_from_gradients(
      token_grid(before_last.data(), grid), token_grid(before_last.grad().data(), grid));
  out.maps[kGradient] = interpret::gradient_saliency(x.grad().data(), 1);
  out.maps[kInputGradient] = interpret::input_x_gradient(images, x.grad().data(), 1);
  return out;
}

NDArray edge_maps(const NDArray& images) {
  if (images.ndim() != 4) fail("edge_maps: expects images [B, C, S, S], got {}", images.shape());
  const NDArray grey = mean(images.to(kFloat64), 1);  // [B, S, S]
  const Index batch = grey.size(0), height = grey.size(1), width = grey.size(2);
  NDArray edges = NDArray::zeros({batch, height, width}, kFloat64);
  const double* in = grey.data<double>();
  double* out = edges.data<double>();
  auto at = [&](Index b, Index y, Index x) {
    return in[(b * height + std::clamp<Index>(y, 0, height - 1)) * width +
              std::clamp<Index>(x, 0, width - 1)];
  };
  for (Index b = 0; b < batch; ++b)
    for (Index y = 0; y < height; ++y)
      for (Index x = 0; x < width; ++x) {
        // (I(x+1) - I(x-1)) / 2, the border pixel repeated: one-sided there.
        const double dx = (at(b, y, x + 1) - at(b, y, x - 1)) / 2;
        const double dy = (at(b, y + 1, x) - at(b, y - 1, x)) / 2;
        out[(b * height + y) * width + x] = std::sqrt(dx * dx + dy * dy);
      }
  return edges;
}

void add_baseline_maps(MapBatch& batch, const NDArray& images, Generator& gen) {
  const Index count = images.size(0), size = images.size(-1);
  batch.maps[kRandom] = NDArray::uniform({count, size, size}, gen, 0, 1, kFloat64);
  batch.maps[kEdge] = edge_maps(images);
}

void add_cnn_maps(MapBatch& batch, vision::CamClassifier& cnn, const NDArray& images,
                  const std::vector<Index>& classes) {
  // CAM is the class's linear layer applied at every cell of the last grid (block 3);
  // Grad-CAM on the 16x16 grid under it (block 2), where no CAM exists (lesson 08).
  const vision::GradCam last = vision::grad_cam(cnn, images, classes, 3);
  batch.maps[kCnnCam] =
      interpret::class_activation_maps(last.features, cnn.classifier.weight.data(), classes);
  batch.maps[kCnnGradCam] = vision::grad_cam(cnn, images, classes, 2).maps;
}

MapBatch model_maps(CanvasVit& vit, vision::CamClassifier& cnn, const NDArray& images,
                    const std::vector<Index>& classes, const std::vector<bool>& flow) {
  std::vector<MapBatch> parts;
  for (Index first = 0; first < images.size(0); first += kMapImages) {
    const Index end = std::min(images.size(0), first + kMapImages);
    const NDArray part = slice(images, 0, first, end);
    const std::vector<Index> part_classes(classes.begin() + first, classes.begin() + end);
    std::vector<bool> part_flow;
    if (!flow.empty()) part_flow.assign(flow.begin() + first, flow.begin() + end);
    parts.push_back(vit_maps(vit, part, part_classes, part_flow));
    add_cnn_maps(parts.back(), cnn, part, part_classes);
  }
  // Each row's parts end to end; a row left undefined by some parts (flow, on parts without
  // a flow image) is 0 there, as vit_maps leaves the flow maps it does not compute.
  MapBatch all;
  all.maps.resize(parts[0].maps.size());
  for (std::size_t row = 0; row < all.maps.size(); ++row) {
    const auto shape = std::find_if(parts.begin(), parts.end(),
                                    [&](const MapBatch& p) { return p.maps[row].defined(); });
    if (shape == parts.end()) continue;
    std::vector<NDArray> rows;
    for (const MapBatch& p : parts) {
      const Index count = p.maps[kGradient].size(0);
      rows.push_back(p.maps[row].defined() ? p.maps[row]
                                           : NDArray::zeros({count, shape->maps[row].size(1),
                                                             shape->maps[row].size(2)},
                                                            shape->maps[row].dtype()));
    }
    all.maps[row] = concat(rows, 0);
  }
  return all;
}

}  // namespace attend::lesson13
