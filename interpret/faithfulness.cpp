// Deletion and insertion curves: see faithfulness.h.
#include "interpret/faithfulness.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

#include "tensor/error.h"

namespace attend::interpret {
namespace {

// Both curves: `deleting` starts with everything kept and drops patches; otherwise it starts
// with nothing and adds them.
PerturbationCurve perturbation_curve(std::span<const double> relevance, const KeepMaskScore& score,
                                     Index steps, bool deleting, std::string_view op) {
  const Index patches = static_cast<Index>(relevance.size());
  if (patches == 0) fail("{}: the map has no patches", op);
  if (steps < 1 || steps > patches)
    fail("{}: steps must be in 1..{} (the number of patches), got {}", op, patches, steps);
  if (!score) fail("{}: no score function", op);
  const std::vector<Index> order = relevance_order(relevance);
  std::vector<bool> kept(static_cast<std::size_t>(patches), deleting);
  PerturbationCurve curve;
  Index changed = 0;  // patches of the ranking removed (or added) so far
  for (Index s = 0; s <= steps; ++s) {
    const Index target = s * patches / steps;  // n_s = floor(s N / k)
    for (; changed < target; ++changed) kept[static_cast<std::size_t>(order[changed])] = !deleting;
    curve.fraction.push_back(static_cast<double>(changed) / static_cast<double>(patches));
    curve.score.push_back(score(kept));
  }
  curve.auc = trapezoid_area(curve.fraction, curve.score);
  return curve;
}

}  // namespace

std::vector<Index> relevance_order(std::span<const double> relevance) {
  for (std::size_t i = 0; i < relevance.size(); ++i)
    if (!std::isfinite(relevance[i]))
      fail("relevance_order: relevance {} of patch {} is not a finite number", relevance[i], i);
  std::vector<Index> order(relevance.size());
  std::iota(order.begin(), order.end(), Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
    return relevance[static_cast<std::size_t>(a)] > relevance[static_cast<std::size_t>(b)];
  });
  return order;
}

PerturbationCurve deletion_curve(std::span<const double> relevance, const KeepMaskScore& score,
                                 Index steps) {
  return perturbation_curve(relevance, score, steps, /*deleting=*/true, "deletion_curve");
}

PerturbationCurve insertion_curve(std::span<const double> relevance, const KeepMaskScore& score,
                                  Index steps) {
  return perturbation_curve(relevance, score, steps, /*deleting=*/false, "insertion_curve");
}

double trapezoid_area(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) fail("trapezoid_area: {} x values but {} y values", x.size(), y.size());
  double area = 0;
  for (std::size_t s = 1; s < x.size(); ++s) area += (x[s] - x[s - 1]) * (y[s] + y[s - 1]) / 2;
  return area;
}

}  // namespace attend::interpret
