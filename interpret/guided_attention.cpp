#include "interpret/guided_attention.h"

#include "autograd/ops.h"
#include "nn/viz/image.h"
#include "tensor/error.h"
#include "tensor/shape_ops.h"

namespace attend::interpret {
namespace {

// Keeps a map's scale finite when it is 0 everywhere (then the scaled map is 0 too).
constexpr double kScaleFloor = 1e-8;

void check_maps(const Tensor& maps, const char* op) {
  if (!maps.defined() || maps.ndim() != 3)
    fail("{}: expects maps [P, h, w], got {}", op,
         maps.defined() ? to_string(maps.shape()) : "none");
}

}  // namespace

Tensor class_activation_maps(const Tensor& features, const Tensor& weight,
                             const std::vector<Index>& classes) {
  if (features.ndim() != 4 || weight.ndim() != 2 || weight.size(1) != features.size(1))
    fail(
        "class_activation_maps: needs features [P, K, h, w] and weight [classes, K], got {} and {}",
        features.shape(), weight.shape());
  const Index pairs = features.size(0), h = features.size(2), w = features.size(3);
  if (static_cast<Index>(classes.size()) != pairs)
    fail("class_activation_maps: {} maps but {} classes (one per map)", pairs, classes.size());
  for (Index c : classes)
    if (c < 0 || c >= weight.size(0))
      fail("class_activation_maps: class {} is outside 0..{}", c, weight.size(0) - 1);
  std::vector<std::int64_t> ids(classes.begin(), classes.end());
  const Tensor rows = index_select(weight, 0, Tensor(NDArray::from_vector(ids, {pairs})));
  // [P, 1, K] x [P, K, h*w] -> [P, 1, h*w]: sum over k of w_k^c f_k at every cell.
  const Tensor maps =
      matmul(unsqueeze(rows, 1), reshape(features, {pairs, features.size(1), h * w}));
  return reshape(maps, {pairs, h, w});
}

Tensor scale_maps(const Tensor& maps) {
  check_maps(maps, "scale_maps");
  const Tensor positive = relu(maps);
  const Tensor peak = max(reshape(positive, {maps.size(0), -1}), 1, /*keepdim=*/true);
  return positive / reshape(peak + kScaleFloor, {maps.size(0), 1, 1});
}

NDArray bilinear_matrix(Index grid, Index size) {
  if (grid < 1 || size < 1) fail("bilinear_matrix: needs sizes >= 1, got {} and {}", grid, size);
  // Resizing is linear, so column j of U is the resized j-th unit row.
  NDArray u = NDArray::zeros({size, grid}, kFloat64);
  for (Index j = 0; j < grid; ++j) {
    NDArray unit = NDArray::zeros({1, grid}, kFloat64);
    unit.set({0, j}, 1.0);
    const NDArray column = viz::resize_bilinear(unit, 1, size);
    for (Index i = 0; i < size; ++i) u.set({i, j}, column.at({0, i}));
  }
  return u;
}

Tensor upsample_maps(const Tensor& maps, Index size) {
  check_maps(maps, "upsample_maps");
  if (maps.size(1) != maps.size(2))
    fail("upsample_maps: expects square maps, got {}", maps.shape());
  const Tensor u(bilinear_matrix(maps.size(1), size).to(maps.dtype()));
  return matmul(matmul(u, maps), transpose(u, 0, 1));  // [S, g] x [P, g, g] x [g, S]
}

Tensor soft_mask(const Tensor& maps, const GainOptions& options) {
  if (!(options.omega > 0)) fail("soft_mask: omega must be positive, got {}", options.omega);
  return sigmoid((maps - options.sigma) * options.omega);
}

Tensor soft_erase(const Tensor& images, const Tensor& masks) {
  if (images.ndim() != 4 || masks.ndim() != 3 || masks.size(0) != images.size(0) ||
      masks.size(1) != images.size(2) || masks.size(2) != images.size(3))
    fail("soft_erase: needs images [P, C, H, W] and masks [P, H, W], got {} and {}", images.shape(),
         masks.shape());
  return images - unsqueeze(masks, 1) * images;
}

Tensor attention_mining_loss(const Tensor& masked_logits) {
  if (masked_logits.ndim() != 1 || masked_logits.size(0) < 1)
    fail("attention_mining_loss: expects one logit per pair [P], got {}", masked_logits.shape());
  return mean(sigmoid(masked_logits));
}

Tensor attention_extra_loss(const Tensor& maps, const Tensor& targets) {
  if (maps.shape() != targets.shape() || maps.ndim() != 3)
    fail("attention_extra_loss: maps and targets must both be [P, H, W], got {} and {}",
         maps.shape(), targets.shape());
  const Tensor d = maps - targets;
  return mean(d * d);
}

NDArray box_mask(const std::vector<data::Box>& boxes, Index size) {
  NDArray mask = NDArray::zeros({size, size}, kFloat32);
  float* m = mask.data<float>();
  for (const data::Box& b : boxes)
    for (Index y = std::max<Index>(b.y0, 0); y < std::min(b.y1, size); ++y)
      for (Index x = std::max<Index>(b.x0, 0); x < std::min(b.x1, size); ++x) m[y * size + x] = 1;
  return mask;
}

NDArray erase_regions(const NDArray& images, const NDArray& regions, std::span<const double> fill) {
  if (images.ndim() != 4 || regions.ndim() != 3 || regions.size(0) != images.size(0) ||
      regions.size(1) != images.size(2) || regions.size(2) != images.size(3))
    fail("erase_regions: needs images [B, C, H, W] and regions [B, H, W], got {} and {}",
         images.shape(), regions.shape());
  if (static_cast<Index>(fill.size()) != images.size(1))
    fail("erase_regions: {} fill values for {} channels", fill.size(), images.size(1));
  NDArray out = images.to(kFloat32).clone();
  const NDArray r = regions.to(kFloat32);
  const Index b_count = images.size(0), channels = images.size(1);
  const Index pixels = images.size(2) * images.size(3);
  float* o = out.data<float>();
  const float* rr = r.data<float>();
  for (Index b = 0; b < b_count; ++b)
    for (Index p = 0; p < pixels; ++p)
      if (rr[b * pixels + p] != 0)
        for (Index c = 0; c < channels; ++c)
          o[(b * channels + c) * pixels + p] =
              static_cast<float>(fill[static_cast<std::size_t>(c)]);
  return out;
}

NDArray attended_regions(const NDArray& scaled_maps, double threshold) {
  if (scaled_maps.ndim() != 3)
    fail("attended_regions: expects maps [B, H, W], got {}", scaled_maps.shape());
  const std::vector<double> values = scaled_maps.to_vector();
  std::vector<double> region(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) region[i] = values[i] >= threshold ? 1 : 0;
  return NDArray::from_vector(region, scaled_maps.shape()).to(kFloat32);
}

}  // namespace attend::interpret
