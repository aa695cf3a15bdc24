// Scoring a map against the truth. The pointing game (Zhang et al. 2016): for every
// (held-out image, class present on it), find the map's largest pixel; it is a hit if that
// pixel lies on an object of the class, within a tolerance (15 pixels in their photos of
// several hundred pixels). The score is hits / (hits + misses), per class, then averaged
// over the classes.
//
// A map that points at random pixels hits with probability (area of the boxes, widened by
// the tolerance) / (area of the image), so a method is only as good as its margin over that.
// The pointing game looks at one pixel; the share of the map's mass inside the boxes looks
// at all of them.
#pragma once

#include <vector>

#include "nn/data/canvas.h"
#include "tensor/ndarray.h"

namespace attend::interpret {

struct Pixel {
  Index x = 0, y = 0;  // column and row
};

// Where a map [H, W] is largest (the first such pixel in row-major order on ties).
Pixel map_maximum(const NDArray& map);

// Euclidean distance in pixels from pixel p to the nearest pixel of the box (0 inside it).
double distance_to_box(Pixel p, const data::Box& box);

// Zhang et al. (2016): a hit when the point lies on an object of the class, or within
// `tolerance` pixels of one.
bool pointing_hit(Pixel p, const std::vector<data::Box>& boxes, double tolerance);

// The share of the size x size pixels that would be hits: the hit probability of a point
// drawn uniformly at random, which is where the maximum of a map of independent uniform
// random values lands. So this is the random baseline's expected hit rate.
double hit_area_share(const std::vector<data::Box>& boxes, Index size, double tolerance);

// The share of a non-negative map's total inside the boxes (their union); 0 for an all-zero
// map.
double mass_inside_boxes(const NDArray& map, const std::vector<data::Box>& boxes);

// The map as the overlays show it and mass_inside_boxes reads it: shifted so that its smallest
// value is 0 when it has negative values (input x gradient, a Grad-CAM before its ReLU);
// unchanged otherwise.
NDArray non_negative_map(const NDArray& map);

// Hits and pairs counted per class, for one kind of map.
class PointingTally {
 public:
  explicit PointingTally(Index classes = 0);
  // hit: 1 or 0, or the probability of a hit (the random baseline's expectation).
  void record(Index label, double hit, double mass_share);
  double hit_rate() const;             // over all (image, class) pairs
  double class_mean_hit_rate() const;  // mean over classes of each class's rate (Zhang et al.)
  double class_hit_rate(Index label) const;
  double mean_mass_share() const;
  Index pairs(Index label) const {
    return static_cast<Index>(pairs_[static_cast<std::size_t>(label)]);
  }

 private:
  std::vector<double> hits_, pairs_, mass_;
};

}  // namespace attend::interpret
