// The region encoder of the canvas captioner (Show, Attend and Tell's CNN): a 64x64 canvas ->
// an 8x8 grid of L = 64 regions a_i of D = 64 features plus the region's position; and its
// pre-training, our stand-in for the paper's ImageNet, after which it is frozen.
#pragma once

#include <span>
#include <vector>

#include "nn/conv.h"
#include "nn/data/canvas.h"
#include "nn/data/fashion_mnist.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "seq/captioning/caption_data.h"

namespace attend::captioning {

// Every region vector a_i ends with its grid position: x and y of the cell's centre, in
// [-1, 1] (left/top -1, right/bottom +1). A region vector has D + kPositionFeatures numbers.
constexpr Index kPositionFeatures = 2;
// The [rows * columns, 2] table of those positions, row-major like the regions.
NDArray grid_coordinates(Index rows, Index columns, DType dtype);

// The sizes of the REF-SAT encoder (shared/bench/ref_sat.py), lessons 09 and 10's: the
// channels of the first convolution, and D, the features of a region.
constexpr Index kEncoderChannels = 32, kRegionFeatures = 64;

constexpr Index kClasses = 10;  // item classes (Fashion-MNIST's, or the stand-in's)
// Cell labels of the encoder's pre-training: the classes, "nothing", the colours, "none".
inline Index encoder_labels() {
  return kClasses + 1 + static_cast<Index>(data::canvas_colors().size()) + 1;
}

// Three times conv 3x3 (padding 1) + ReLU + max-pool 2: [B, 3, S, S] -> [B, D, S/8, S/8],
// read as L = (S/8)^2 regions of D features and their 2 coordinates, [B, L, D + 2] (REF-SAT's
// encoder, plus the coordinates).
class RegionEncoder : public nn::Module {
 public:
  RegionEncoder(Index channels, Index features, Index labels, Generator& gen);
  Tensor feature_grid(const Tensor& images);  // [B, D, S/8, S/8]
  Tensor regions(const Tensor& images);       // [B, L, D + 2]
  // Pre-training scores of every cell: Linear on each region's D features,
  // [B, L, classes + 1 (nothing) + colours + 1 (none)].
  Tensor cell_logits(const Tensor& images);
  std::string describe() const override { return "RegionEncoder"; }

  nn::Conv2d conv1, conv2, conv3;
  nn::Linear classifier;
};

// Pre-training, our stand-in for the paper's ImageNet: on freshly drawn canvases like the
// captioned ones (64x64, 1 to 3 items, from the training pictures), every cell of the 8x8
// grid learns to say what lies at its centre: one of the classes or "nothing", and the colour
// of what is there (or none). This uses the items' boxes, as the "bottom-up" features of
// later captioners are trained on boxes (Anderson et al. 2018); the decoder never sees a box.
// Trained this way, a cell next to an object says "nothing" although its 22-pixel window sees
// part of the object, so features are sharp where they matter for attention; and a cell's
// window holds neighbours during pre-training, as it will on the captioned canvases. (An
// encoder pre-trained on single items on 32x32 canvases named 98% of held-out single items but
// only 96.4% of the objects on the test canvases, where a cell's window can also hold part of a
// neighbour: docs/09, "How we got here".)
struct PretrainOptions {
  Index steps = 10000;  // minibatches of freshly drawn canvases (lessons 09 and 10)
  Index batch = 8;      // canvases per minibatch
  double lr = 2e-3;
  Index canvas_size = 64;  // side of the pre-training canvases
  Index max_objects = 3;   // items on each: 1 to max_objects
  bool progress = true;    // the progress line on stderr (false: none)
};
// The targets of every cell: `what` [B, L] int64 is the class of the object whose box holds
// the cell's centre, or kClasses ("nothing"); `colour` [B, L] is its colour, or the number
// of colours ("none") on a cell with nothing.
struct CellTargets {
  Tensor what, colour;
};
CellTargets cell_targets(const std::vector<const CanvasExample*>& canvases, Index canvas_size);
// Canvases of `canvas_size` pixels with 1 to max_objects items of `classes`, from the pictures
// of `pictures` (shared, not copied; its options are not used).
data::CanvasGenerator pretraining_canvases(const data::CanvasGenerator& pictures, Index canvas_size,
                                           const std::vector<Index>& classes, Index max_objects);
// Per item on the canvases (B of them): the mean of cell_scores [B, L, C] over the cells
// whose centre lies in its box, [items, C], and its class, [items] int64. An item whose box
// holds no cell centre is left out.
struct ItemScores {
  Tensor logits, labels;
};
ItemScores item_scores(const Tensor& cell_scores,
                       const std::vector<const CanvasExample*>& canvases);
// Per cell: cross-entropy of what is there and of its colour (or none); plus, per item, the
// cross-entropy of its class from the mean class scores of the cells inside its box.
Tensor pretraining_loss(RegionEncoder& encoder, const std::vector<CanvasExample>& canvases);
// Trains the encoder; returns the mean loss of each tenth of the run.
std::vector<double> pretrain_encoder(RegionEncoder& encoder, const data::CanvasGenerator& canvases,
                                     const PretrainOptions& options, Generator& gen);
// The share of the items on `canvases` whose noun (and colour) the encoder names, from the
// mean scores of the cells inside each item's box: on held-out single items, and on the
// objects of the test canvases.
struct ItemAccuracy {
  Index objects = 0;
  double noun = 0, colour = 0;
};
ItemAccuracy item_accuracy(RegionEncoder& encoder, const std::vector<CanvasExample>& canvases);

// The frozen encoder's regions for every canvas: float32 [N, L, D + 2] (computed once, so that
// the decoder trains on them without running the CNN again).
NDArray encode_all(RegionEncoder& encoder, std::span<const CanvasExample> canvases);

}  // namespace attend::captioning
