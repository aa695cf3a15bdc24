// Does a map point at what the model actually uses? The deletion and insertion curves
// (Petsiuk, Das & Saenko 2018, "RISE", section 4.1 "Deletion" and "Insertion"):
//
//   deletion:  start from the whole input and remove the patches (or tokens) the map ranks
//              most relevant first; the class probability should fall fast, so a LOW area
//              under the curve is good.
//   insertion: start from an input with every patch removed and add them back, most relevant
//              first; the probability should rise fast, so a HIGH area is good.
//
// k steps: after step s (s = 0..k) the first n_s = floor(s N / k) patches of the ranking are
// removed (deletion) or present (insertion), N = the number of patches; the curve is the
// model's score at the k + 1 points, and its area is the trapezoid rule over the fraction
// n_s / N, from 0 to 1:
//   AUC = sum_s (x_{s+1} - x_s) (y_s + y_{s+1}) / 2.
// With scores in [0, 1] (probabilities) the area is in [0, 1] as well.
//
// Model-agnostic: the caller passes a function that scores a keep-mask (kept[i] = patch i is
// present) and decides what "removed" means: zeros, the mean colour, a blurred copy (RISE
// inserts into a blurred image), or a masked token. The ranking is by relevance, largest
// first; equal relevances keep their index order (a stable sort), so a constant map removes
// patches left to right.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::interpret {

// The model's score (say the class probability) for an input with only the kept patches.
using KeepMaskScore = std::function<double(const std::vector<bool>& kept)>;

struct PerturbationCurve {
  std::vector<double> fraction;  // n_s / N: the share removed (deletion) or added (insertion)
  std::vector<double> score;     // the model's score there
  double auc = 0;                // trapezoid over fraction, which runs from 0 to 1
};

// Patch indices from the most relevant to the least (ties in index order).
std::vector<Index> relevance_order(std::span<const double> relevance);

// Deletion: remove the most relevant patches first, in `steps` steps (1 <= steps <= N).
PerturbationCurve deletion_curve(std::span<const double> relevance, const KeepMaskScore& score,
                                 Index steps);

// Insertion: from nothing kept, add the most relevant patches first.
PerturbationCurve insertion_curve(std::span<const double> relevance, const KeepMaskScore& score,
                                  Index steps);

// Trapezoid area under (x, y), x increasing; the sizes must match.
double trapezoid_area(std::span<const double> x, std::span<const double> y);

}  // namespace attend::interpret
