// Spearman rank correlation with average ranks for ties: see sanity.h.
#include "interpret/sanity.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tensor/error.h"

namespace attend::interpret {
namespace {

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double xy = 0, xx = 0, yy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xy += (x[i] - mean_x) * (y[i] - mean_y);
    xx += (x[i] - mean_x) * (x[i] - mean_x);
    yy += (y[i] - mean_y) * (y[i] - mean_y);
  }
  return xx > 0 && yy > 0 ? xy / std::sqrt(xx * yy) : 0.0;  // a constant side: 0 (sanity.h)
}

}  // namespace

std::vector<double> average_ranks(std::span<const double> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::isnan(values[i])) fail("average_ranks: value {} is NaN, which has no rank", i);
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start + 1;  // [start, end): a run of equal values
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    // Positions start..end-1 hold ranks start+1..end; their average:
    const double rank = static_cast<double>(start + 1 + end) / 2;
    for (std::size_t k = start; k < end; ++k) ranks[order[k]] = rank;
    start = end;
  }
  return ranks;
}

double spearman_correlation(std::span<const double> a, std::span<const double> b, bool absolute) {
  if (a.size() != b.size() || a.size() < 2)
    fail("spearman_correlation: maps of {} and {} values (need the same size, at least 2)",
         a.size(), b.size());
  std::vector<double> x(a.begin(), a.end()), y(b.begin(), b.end());
  if (absolute) {
    for (double& v : x) v = std::abs(v);
    for (double& v : y) v = std::abs(v);
  }
  return pearson(average_ranks(x), average_ranks(y));
}

}  // namespace attend::interpret
