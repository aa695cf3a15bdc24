// Localisation: does a model look where the object is? Scores attention maps over a grid of
// image regions against the objects' boxes (the canvases of nn/data/canvas.h record them;
// real captioning data sets do not, and Xu et al. 2015 could only show pictures).
//
// A region "lies inside" a box when its centre does: region i of a grid x grid map is row
// i / grid, column i % grid (row-major, as the encoders flatten their feature maps), and its
// centre is ((i % grid + 0.5) * cell, (i / grid + 0.5) * cell) in pixels, cell = the side of
// one region in pixels.
//
//   Localisation where = interpret::localisation(canvases, alphas, 8, 64);
//   where.noun_hit_rate   // share of nouns whose most attended region is in the object's box
#pragma once

#include <array>
#include <span>
#include <vector>

#include "nn/data/canvas.h"

namespace attend::interpret {

// True when the centre of region `region` of a grid x grid map, regions `cell_pixels` wide,
// lies inside `box`.
bool region_in_box(const data::Box& box, Index region, Index grid, double cell_pixels);

// The regions of a grid x grid map whose centre lies inside `box`, in row-major order.
std::vector<Index> cells_in_box(const data::Box& box, Index grid, double cell_pixels);

// The share of an attention map (weights over the grid x grid regions, summing to 1) that
// falls on regions inside `box`: sum_{i in box} alpha_i. A uniform map gives the box's share
// of the regions: the chance level.
double mass_in_box(std::span<const double> weights, const data::Box& box, Index grid,
                   double cell_pixels);

// Where the attention of word t lies, for the words that name an object (word_object >= 0).
struct Localisation {
  Index object_words = 0;
  double hit_rate = 0;     // share of object words whose most attended region is in the box
  double mass_in_box = 0;  // mean of sum of alpha over the regions inside the box
  double noun_hit_rate = 0, colour_hit_rate = 0;  // hit_rate over the nouns / colour words
  double noun_mass_in_box = 0;                    // mass_in_box over the nouns
  // The same at the word just before an object's first word ("a"), with that object's box:
  // does the model read the object one word early?
  double before_hit_rate = 0;
  // Not static saliency, over canvases with 2+ objects: the share where the most attended
  // region at the first object's noun differs from the one at the second object's noun
  // (0 for any fixed map), and the mean total-variation distance 1/2 sum_i |alpha - alpha'|
  // between those two maps.
  Index multi_object_canvases = 0;
  double argmax_changes = 0;
  double total_variation = 0;
};
// alphas[n]: [T_n, L] the attention at each word of canvas n's caption (at least as many
// rows as words; the reference caption fed in by teacher forcing); grid = sqrt(L) regions a
// side over a canvas of canvas_size pixels.
Localisation localisation(const std::vector<data::CanvasExample>& canvases,
                          const std::vector<NDArray>& alphas, Index grid, Index canvas_size);

// The same for maps over regions of any shape (object proposals): region i of canvas n "lies
// inside" a box when centres[n][i] (x, y in pixels) does. alphas[n] may have more columns than
// canvas n has centres: the extra ones are padding, never inside a box (their weight is 0).
using RegionCentre = std::array<double, 2>;
Localisation localisation(const std::vector<data::CanvasExample>& canvases,
                          const std::vector<NDArray>& alphas,
                          const std::vector<std::vector<RegionCentre>>& centres);

}  // namespace attend::interpret
