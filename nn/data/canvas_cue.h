// A background cue on the canvases, for lesson 14 ("when attention is wrong"): a classifier
// of boats that looks at the water. The cue is a tinted band across the canvas, in the free
// space beside the items (never over them), so that a map's mass on the band and its mass in
// the item's box are two separate numbers.
//
// CanvasOptions::cue (nn/data/canvas.h) switches it on: with probability p_with the band is
// painted on a canvas that holds an item of the cue's class, with p_without on the others.
// Training canvases (p_with = 0.95, p_without = 0.02) teach that the band means the class;
// the test sets break the rule:
//
//   aligned      the band exactly when the class is present   (p_with = 1, p_without = 0)
//   conflicting  the band exactly when the class is absent    (p_with = 0, p_without = 1)
//   independent  the band on half of the canvases, at random  (p_with = p_without = 0.5)
//
// The three test sets hold the same items in the same places: the generator draws the same
// random numbers for the band whether it paints it or not, so they differ by the band only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nn/data/canvas.h"

namespace attend::data {

// Pixels between the band and any item's box.
inline constexpr Index kCueGap = 2;

// Decides whether the canvas gets the band (from its objects' classes) and where it goes:
// parallel to the layout axis (above or below a row of items, left or right of a column),
// at least kCueGap pixels from every item's box, at a random position among those that fit.
// Records has_cue and cue_box. Called by CanvasGenerator::make when cue.label >= 0.
void add_cue(CanvasExample& example, const CanvasCue& cue, bool horizontal, Generator& gen);

// Fails with a clear message unless the cue's class is one of options.classes, its
// probabilities lie in [0, 1] and a band fits beside items of options.max_item_size that
// wander `across_extent` pixels across the layout axis. (Called by the generator.)
void check_cue(const CanvasOptions& options, Index across_extent);

// The test conditions above, from the training cue (same class, band and colour).
CanvasCue aligned_cue(CanvasCue cue);
CanvasCue conflicting_cue(CanvasCue cue);
CanvasCue independent_cue(CanvasCue cue);

struct CueSplitSizes {
  std::size_t train = 0, validation = 0, test = 0;  // test: canvases in each test set
};
struct CueSplits {
  std::vector<CanvasExample> train, validation;                  // options.cue as given
  std::vector<CanvasExample> aligned, conflicting, independent;  // the same canvases, 3 cues
};
// Training canvases from train_items; validation and the three test sets from held_out_items
// (pictures the model never trains on). Validation follows the training cue: a developer who
// does not know about the shortcut would validate on data like the training data.
CueSplits make_cue_splits(const LabelledImages& train_items, const LabelledImages& held_out_items,
                          const CanvasOptions& options, const CueSplitSizes& sizes,
                          std::uint64_t seed);
// The same, from the pictures of two generators (shared, not copied; their own options are not
// used): a caller that keeps Fashion-MNIST's pictures only as a generator's bytes.
CueSplits make_cue_splits(const CanvasGenerator& train_items, const CanvasGenerator& held_out_items,
                          const CanvasOptions& options, const CueSplitSizes& sizes,
                          std::uint64_t seed);

}  // namespace attend::data
