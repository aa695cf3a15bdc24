// Attention over objects instead of a grid. Show, Attend and Tell attends over the 8x8 cells
// of the CNN's feature map, whatever lies in them; later captioners attend over object
// proposals, one region per thing in the picture (Anderson et al. 2018, "bottom-up"
// attention, with a detector's boxes). Our canvases need no detector: the items lie on a
// black background, so the connected components of the ink are the proposals.
//
//   canvas [3, S, S] -> propose_regions -> components (box, pixels)
//   cells [L, D] of the frozen encoder -> pool_regions -> one vector per component
//   a_k = [pooled features (D); box width, height (2); box centre x, y (2)]
//
// A canvas has 1 to max_regions components, so the regions of a batch are padded with zero
// vectors to max_regions; a real region is never all zero (its box has a width), and the
// decoder (CaptionDecoder::padded_regions) masks the zero rows out of the attention's softmax,
// exactly (f_init keeps dividing by max_regions: caption_decoder.h says why).
#pragma once

#include <array>
#include <span>
#include <vector>

#include "autograd/tensor.h"
#include "nn/data/canvas.h"

namespace attend::captioning {

struct ProposalOptions {
  // A pixel is ink when its brightest channel exceeds this (the canvases' own threshold for
  // an object's box, so that a whole item's component has the item's box).
  double threshold = 0.15;
  // Two ink pixels belong to one component when they are at most `reach` apart along x and
  // along y: reach 2 bridges a gap of one dark pixel inside an item (a sandal's straps), and
  // the canvases keep at least 2 dark pixels between items, so items never merge.
  Index reach = 2;
  Index min_pixels = 4;   // smaller components are noise, dropped
  Index max_regions = 5;  // the largest components kept; also the padded region count
};

// One component: its pixels (y * S + x, in scan order) and its tight box.
struct Proposal {
  std::vector<Index> pixels;
  data::Box box;
};

// The components of the ink of image [C, S, S], in the order a row-major scan meets them
// (the largest max_regions of them if there are more). A canvas without ink gets one
// proposal, the whole canvas, so that the decoder always has a region to look at.
std::vector<Proposal> propose_regions(const NDArray& image, const ProposalOptions& options = {});

// The pooling weights [K, L] of K proposals over a grid x grid feature map of a canvas of
// `canvas_size` pixels: the share of proposal k's pixels that lie in cell l (each row sums
// to 1), so a region's vector is the mean of the cells it covers, weighted by how much of it
// each cell holds.
NDArray pooling_weights(std::span<const Proposal> proposals, Index grid, Index canvas_size);

// Region features by pooling: weights [B, K, L] x cells [B, L, D] -> [B, K, D]. A matrix
// product, so the gradient reaches the cells (an encoder trained through it would learn from
// the regions).
Tensor pool_regions(const Tensor& weights, const Tensor& cells);

// The numbers a region vector ends with: box width and height, then centre x and y, all in
// the grid coordinates' units ([-1, 1] across the canvas); the centre is last, where
// the decoder reads "where it looked" (caption_decoder.h).
constexpr Index kBoxFeatures = 4;
std::array<float, kBoxFeatures> box_features(const data::Box& box, Index canvas_size);

// Every canvas's object regions, ready for the decoder, and where they are.
struct ObjectRegions {
  NDArray regions;                            // float32 [N, max_regions, D + 4], zero-padded
  std::vector<std::vector<data::Box>> boxes;  // per canvas, one box per real region
  Index real_regions = 0;                     // summed over the canvases
};
// From the frozen encoder's grid regions [N, L, D + 2] (encode_all; their two coordinates are
// dropped) and the canvases' images.
ObjectRegions object_regions(const NDArray& grid_regions,
                             std::span<const data::CanvasExample> canvases,
                             const ProposalOptions& options = {});

// The keep mask [B, L] of a batch of regions [B, L, F]: 1 where a region's vector has a
// non-zero number, 0 where it is all zero (padding). No gradient.
Tensor region_mask(const Tensor& regions);

// The centres of the real regions' boxes (pixels), per canvas, for interpret::localisation.
std::vector<std::vector<std::array<double, 2>>> region_centres(const ObjectRegions& objects);

}  // namespace attend::captioning
