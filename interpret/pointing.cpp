// The pointing game and the mass inside the boxes: see pointing.h.
#include "interpret/pointing.h"

#include <algorithm>
#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/error.h"

namespace attend::interpret {

Pixel map_maximum(const NDArray& map) {
  if (map.ndim() != 2 || map.numel() == 0)
    fail("map_maximum: expects a map [H, W], got {}", map.shape());
  const std::vector<double> values = map.to_vector();
  // max_element returns the first of equal largest values: the first in row-major order.
  const auto best =
      static_cast<Index>(std::max_element(values.begin(), values.end()) - values.begin());
  return Pixel{best % map.size(1), best / map.size(1)};
}

double distance_to_box(Pixel p, const data::Box& box) {
  // The box holds pixels x0..x1-1 and y0..y1-1; outside, the nearest is on its border.
  const double dx = static_cast<double>(std::max({box.x0 - p.x, Index{0}, p.x - (box.x1 - 1)}));
  const double dy = static_cast<double>(std::max({box.y0 - p.y, Index{0}, p.y - (box.y1 - 1)}));
  return std::sqrt(dx * dx + dy * dy);
}

bool pointing_hit(Pixel p, const std::vector<data::Box>& boxes, double tolerance) {
  for (const data::Box& box : boxes)
    if (distance_to_box(p, box) <= tolerance) return true;
  return false;
}

double hit_area_share(const std::vector<data::Box>& boxes, Index size, double tolerance) {
  Index hits = 0;
  for (Index y = 0; y < size; ++y)
    for (Index x = 0; x < size; ++x) hits += pointing_hit({x, y}, boxes, tolerance);
  return static_cast<double>(hits) / static_cast<double>(size * size);
}

double mass_inside_boxes(const NDArray& map, const std::vector<data::Box>& boxes) {
  if (map.ndim() != 2) fail("mass_inside_boxes: expects a map [H, W], got {}", map.shape());
  const std::vector<double> values = map.to_vector();
  const Index width = map.size(1);
  double inside = 0, total = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0) fail("mass_inside_boxes: the map has a negative value ({})", values[i]);
    total += values[i];
    const Pixel p{static_cast<Index>(i) % width, static_cast<Index>(i) / width};
    if (pointing_hit(p, boxes, 0)) inside += values[i];
  }
  return total > 0 ? inside / total : 0.0;
}

NDArray non_negative_map(const NDArray& map) {
  const std::vector<double> values = map.to_vector();
  if (values.empty()) return map;
  const double lowest = *std::min_element(values.begin(), values.end());
  return lowest < 0 ? map - lowest : map;
}

PointingTally::PointingTally(Index classes)
    : hits_(static_cast<std::size_t>(classes), 0.0),
      pairs_(static_cast<std::size_t>(classes), 0.0),
      mass_(static_cast<std::size_t>(classes), 0.0) {}

void PointingTally::record(Index label, double hit, double mass_share) {
  if (label < 0 || label >= static_cast<Index>(pairs_.size()))
    fail("PointingTally: class {} is outside 0..{}", label, pairs_.size() - 1);
  const auto c = static_cast<std::size_t>(label);
  hits_[c] += hit;
  pairs_[c] += 1;
  mass_[c] += mass_share;
}

double PointingTally::hit_rate() const {
  double hits = 0, pairs = 0;
  for (std::size_t c = 0; c < pairs_.size(); ++c) hits += hits_[c], pairs += pairs_[c];
  return pairs > 0 ? hits / pairs : 0.0;
}

double PointingTally::class_hit_rate(Index label) const {
  if (label < 0 || label >= static_cast<Index>(pairs_.size()))
    fail("PointingTally::class_hit_rate: class {} is outside 0..{}", label,
         static_cast<Index>(pairs_.size()) - 1);
  const auto c = static_cast<std::size_t>(label);
  return pairs_[c] > 0 ? hits_[c] / pairs_[c] : 0.0;
}

double PointingTally::class_mean_hit_rate() const {
  double sum = 0, classes = 0;
  for (std::size_t c = 0; c < pairs_.size(); ++c)
    if (pairs_[c] > 0) sum += hits_[c] / pairs_[c], classes += 1;
  return classes > 0 ? sum / classes : 0.0;
}

double PointingTally::mean_mass_share() const {
  double mass = 0, pairs = 0;
  for (std::size_t c = 0; c < pairs_.size(); ++c) mass += mass_[c], pairs += pairs_[c];
  return pairs > 0 ? mass / pairs : 0.0;
}

}  // namespace attend::interpret
