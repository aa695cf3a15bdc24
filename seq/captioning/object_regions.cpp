// Object regions: the connected components of a canvas's ink, each pooled from the frozen
// encoder's cells into one region vector (object_regions.h says why).
#include "seq/captioning/object_regions.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "seq/captioning/region_encoder.h"
#include "tensor/error.h"
#include "tensor/shape_ops.h"

namespace attend::captioning {

namespace {

// Per pixel: is it ink (its brightest channel above the threshold)?
std::vector<char> ink_of(const NDArray& image, double threshold) {
  const Index channels = image.size(0), side = image.size(1);
  const NDArray pixels = image.to(kFloat32);
  const float* p = pixels.data<float>();
  std::vector<char> ink(static_cast<std::size_t>(side * side), 0);
  for (Index c = 0; c < channels; ++c)
    for (Index i = 0; i < side * side; ++i)
      if (p[c * side * side + i] > threshold) ink[static_cast<std::size_t>(i)] = 1;
  return ink;
}

// The component of ink pixel `seed`, found by a breadth-first search over the ink pixels at
// most `reach` away; its pixels are marked in `seen`.
Proposal grow(Index seed, const std::vector<char>& ink, std::vector<char>& seen, Index side,
              Index reach) {
  Proposal p;
  p.box = {side, side, 0, 0};
  p.pixels.push_back(seed);
  seen[static_cast<std::size_t>(seed)] = 1;
  for (std::size_t next = 0; next < p.pixels.size(); ++next) {
    const Index y = p.pixels[next] / side, x = p.pixels[next] % side;
    p.box = {std::min(p.box.x0, x), std::min(p.box.y0, y), std::max(p.box.x1, x + 1),
             std::max(p.box.y1, y + 1)};
    for (Index ny = std::max<Index>(0, y - reach); ny <= std::min(side - 1, y + reach); ++ny)
      for (Index nx = std::max<Index>(0, x - reach); nx <= std::min(side - 1, x + reach); ++nx) {
        const auto i = static_cast<std::size_t>(ny * side + nx);
        if (ink[i] && !seen[i]) {
          seen[i] = 1;
          p.pixels.push_back(ny * side + nx);
        }
      }
  }
  std::sort(p.pixels.begin(), p.pixels.end());  // scan order
  return p;
}

}  // namespace

std::vector<Proposal> propose_regions(const NDArray& image, const ProposalOptions& options) {
  if (image.ndim() != 3 || image.size(1) != image.size(2))
    fail("propose_regions: expected a square image [C, S, S], got {}", image.shape());
  if (options.reach < 1 || options.min_pixels < 1 || options.max_regions < 1)
    fail("propose_regions: reach ({}), min_pixels ({}) and max_regions ({}) must be at least 1",
         options.reach, options.min_pixels, options.max_regions);
  const Index side = image.size(1);
  const std::vector<char> ink = ink_of(image, options.threshold);
  std::vector<char> seen(ink.size(), 0);
  std::vector<Proposal> found;
  for (Index i = 0; i < side * side; ++i)
    if (ink[static_cast<std::size_t>(i)] && !seen[static_cast<std::size_t>(i)]) {
      Proposal p = grow(i, ink, seen, side, options.reach);
      if (static_cast<Index>(p.pixels.size()) >= options.min_pixels) found.push_back(std::move(p));
    }
  if (found.empty()) {  // no ink: the whole canvas
    Proposal whole;
    whole.box = {0, 0, side, side};
    for (Index i = 0; i < side * side; ++i) whole.pixels.push_back(i);
    found.push_back(std::move(whole));
  }
  if (static_cast<Index>(found.size()) > options.max_regions) {
    // Keep the largest, in scan order: the stable sort keeps earlier ones first among equals.
    std::vector<std::size_t> order(found.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return found[a].pixels.size() > found[b].pixels.size();
    });
    order.resize(static_cast<std::size_t>(options.max_regions));
    std::sort(order.begin(), order.end());
    std::vector<Proposal> kept;
    for (std::size_t k : order) kept.push_back(std::move(found[k]));
    found = std::move(kept);
  }
  return found;
}

NDArray pooling_weights(std::span<const Proposal> proposals, Index grid, Index canvas_size) {
  if (grid < 1 || canvas_size % grid != 0)
    fail("pooling_weights: a {}-pixel canvas does not split into a {}x{} grid", canvas_size, grid,
         grid);
  const Index cell = canvas_size / grid;
  NDArray weights = NDArray::zeros({static_cast<Index>(proposals.size()), grid * grid});
  float* w = weights.data<float>();
  for (std::size_t k = 0; k < proposals.size(); ++k) {
    const auto& pixels = proposals[k].pixels;
    if (pixels.empty()) fail("pooling_weights: proposal {} has no pixels", k);
    const float share = 1.0f / static_cast<float>(pixels.size());
    for (Index p : pixels) {
      const Index y = p / canvas_size, x = p % canvas_size;
      if (p < 0 || y >= canvas_size)
        fail("pooling_weights: pixel {} of proposal {} is outside the {}x{} canvas", p, k,
             canvas_size, canvas_size);
      w[static_cast<Index>(k) * grid * grid + (y / cell) * grid + x / cell] += share;
    }
  }
  return weights;
}

Tensor pool_regions(const Tensor& weights, const Tensor& cells) {
  if (weights.ndim() != 3 || cells.ndim() != 3 || weights.size(0) != cells.size(0) ||
      weights.size(2) != cells.size(1))
    fail("pool_regions: weights [B, K, L] and cells [B, L, D] expected, got {} and {}",
         weights.shape(), cells.shape());
  return matmul(weights, cells);
}

std::array<float, kBoxFeatures> box_features(const data::Box& box, Index canvas_size) {
  const auto scaled = [&](double pixels) {
    return static_cast<float>(2.0 * pixels / static_cast<double>(canvas_size));
  };
  return {scaled(static_cast<double>(box.x1 - box.x0)),
          scaled(static_cast<double>(box.y1 - box.y0)), scaled(box.center_x()) - 1.0f,
          scaled(box.center_y()) - 1.0f};
}

ObjectRegions object_regions(const NDArray& grid_regions,
                             std::span<const data::CanvasExample> canvases,
                             const ProposalOptions& options) {
  const Index n = static_cast<Index>(canvases.size());
  if (grid_regions.ndim() != 3 || grid_regions.size(0) != n ||
      grid_regions.size(2) <= kPositionFeatures)
    fail("object_regions: {} canvases but grid regions {} ([N, L, D + 2] expected)", n,
         grid_regions.shape());
  const Index cells = grid_regions.size(1), features = grid_regions.size(2) - kPositionFeatures;
  const Index grid = static_cast<Index>(std::lround(std::sqrt(static_cast<double>(cells))));
  if (grid * grid != cells) fail("object_regions: {} cells are not a square grid", cells);
  const Index width = features + kBoxFeatures, k_max = options.max_regions;
  ObjectRegions out;
  out.regions = NDArray::zeros({n, k_max, width});
  // The cells' features without their two coordinates: [N, L, D].
  const NDArray cell_features = slice(grid_regions.to(kFloat32), 2, 0, features);
  for (Index i = 0; i < n; ++i) {
    const NDArray& image = canvases[static_cast<std::size_t>(i)].image;
    if (!image.defined()) fail("object_regions: canvas {} has no image (dropped?)", i);
    const std::vector<Proposal> proposals = propose_regions(image, options);
    const NDArray w = pooling_weights(proposals, grid, image.size(-1));
    // [1, K, L] x [1, L, D]: the proposals' features, pooled from this canvas's cells.
    const NDArray pooled = pool_regions(Tensor(w.reshape({1, w.size(0), cells})),
                                        Tensor(slice(cell_features, 0, i, i + 1)))
                               .data();
    float* dst = out.regions.data<float>() + i * k_max * width;
    std::vector<data::Box> boxes;
    for (std::size_t k = 0; k < proposals.size(); ++k) {
      float* row = dst + static_cast<Index>(k) * width;
      std::copy_n(pooled.data<float>() + static_cast<Index>(k) * features, features, row);
      const auto box = box_features(proposals[k].box, image.size(-1));
      std::copy(box.begin(), box.end(), row + features);
      boxes.push_back(proposals[k].box);
    }
    out.real_regions += static_cast<Index>(boxes.size());
    out.boxes.push_back(std::move(boxes));
  }
  return out;
}

Tensor region_mask(const Tensor& regions) {
  if (regions.ndim() != 3) fail("region_mask: regions [B, L, F] expected, got {}", regions.shape());
  return to_dtype(ne(sum(abs(regions.detach()), -1), zeros({}, regions.dtype())), regions.dtype());
}

std::vector<std::vector<std::array<double, 2>>> region_centres(const ObjectRegions& objects) {
  std::vector<std::vector<std::array<double, 2>>> out;
  for (const auto& boxes : objects.boxes) {
    std::vector<std::array<double, 2>> centres;
    for (const data::Box& b : boxes) centres.push_back({b.center_x(), b.center_y()});
    out.push_back(std::move(centres));
  }
  return out;
}

}  // namespace attend::captioning
