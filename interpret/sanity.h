// The similarity measure of the sanity checks for saliency maps (Adebayo et al. 2018, "Sanity
// Checks for Saliency Maps", section 3): a map that is faithful to the model must change when
// the model's weights are randomised (cascading, from the top layer down) or when the model is
// trained on shuffled labels. How much it changed is measured by the Spearman rank correlation
// between the map of the trained model and the map of the randomised one: near 1, the method
// barely looked at the weights and fails the check.
//
// Spearman's rho is the Pearson correlation of the ranks:
//     rho = cov(rank(a), rank(b)) / (sd(rank(a)) sd(rank(b)))
// Tied values share the average of the ranks they span (values 5, 7, 7, 9 get ranks 1, 2.5,
// 2.5, 4), which keeps rho in [-1, 1] and equal to 1 - 6 sum d_i^2 / (n (n^2 - 1)) when there
// are no ties. Adebayo et al. report it both on the maps and on their absolute values (a
// method whose sign flips but whose pattern stays the same is also suspect): pass absolute.
#pragma once

#include <span>
#include <vector>

namespace attend::interpret {

// Ranks 1..n of the values, ties given the average of the ranks they span.
std::vector<double> average_ranks(std::span<const double> values);

// Spearman rank correlation of two maps of the same size (at least 2 values), on |a| and |b|
// if absolute. A constant map has no order to compare: rho is then 0 (documented rather than
// NaN, so that a randomised model whose map is all zero reads as "changed").
double spearman_correlation(std::span<const double> a, std::span<const double> b,
                            bool absolute = false);

}  // namespace attend::interpret
