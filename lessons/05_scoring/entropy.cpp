// (b) Why scaled dot-product attention divides by sqrt(d) (Vaswani et al. 2017, eq. 1 and
// the footnote to section 3.2.1): if the entries of q and k are independent with mean 0 and
// variance 1, then q . k = sum_i q_i k_i is a sum of d terms of variance 1, so its variance is d.
// As d grows the scores spread out, the largest one dominates exp(), and the softmax becomes nearly
// one-hot: its entropy falls towards 0, and its gradient (y_i (delta_ij - y_j)) vanishes.
// Dividing by sqrt(d) keeps the variance at 1 for every d.
//
// The entropy H = -sum_k p_k log p_k measures how spread the weights are: log(n) for n
// equal weights (the maximum), 0 for one-hot. How much gradient the softmax passes back is
// measured by the trace of its Jacobian dp_i/ds_j = p_i (delta_ij - p_j): sum_i p_i (1 - p_i)
// = 1 - sum_i p_i^2, which is 1 - 1/n for equal weights and 0 for one-hot.
#include <algorithm>
#include <cmath>

#include "lesson.h"

namespace attend::lesson05 {
namespace {

// Queries drawn and scored at a time: at d = 1024 one chunk of keys is 100 x 64 x 1024
// doubles (52 MB), where all 1000 queries at once would take half a gigabyte.
constexpr Index kQueriesPerChunk = 100;

// Running sums over the chunks, for the means and standard deviations of section 2.
struct Sums {
  double entropy = 0, top = 0, slope = 0, score = 0, score_squared = 0;
  Index rows = 0, scores = 0;

  void add(const NDArray& scores_chunk) {
    NDArray p = softmax(scores_chunk, -1);
    const Index n = scores_chunk.numel() / scores_chunk.size(-1);
    entropy += mean_entropy(p) * static_cast<double>(n);
    top += sum(max(p, -1)).item();
    slope += static_cast<double>(n) - sum(p * p).item();  // sum over rows of 1 - sum_i p_i^2
    score += sum(scores_chunk).item();
    score_squared += sum(scores_chunk * scores_chunk).item();
    rows += n;
    scores += scores_chunk.numel();
  }
  double mean_entropy_value() const { return entropy / static_cast<double>(rows); }
  double mean_top() const { return top / static_cast<double>(rows); }
  double mean_slope() const { return slope / static_cast<double>(rows); }
  double score_std() const {
    const double m = score / static_cast<double>(scores);
    return std::sqrt(score_squared / static_cast<double>(scores) - m * m);
  }
};

}  // namespace

double mean_entropy(const NDArray& weights) {
  const NDArray p = weights.to(kFloat64);
  const Index n = p.size(-1), rows = p.numel() / n;
  const double* w = p.data<double>();
  double total = 0;
  for (Index r = 0; r < rows; ++r)
    for (Index k = 0; k < n; ++k) {
      const double v = w[r * n + k];
      if (v > 0) total -= v * std::log(v);  // 0 log 0 = 0: masked keys add nothing
    }
  return total / static_cast<double>(rows);
}

EntropyPoint entropy_at(Index size, Index keys, Index queries, Generator& gen) {
  if (size < 1 || keys < 1 || queries < 1)
    fail("entropy_at: size, keys and queries must be at least 1, got {}, {} and {}", size, keys,
         queries);
  NoGradGuard no_graph;
  Sums unscaled, scaled;
  for (Index first = 0; first < queries; first += kQueriesPerChunk) {
    const Index count = std::min(kQueriesPerChunk, queries - first);
    // Each query is a batch of its own ([count, 1, d]) with its own keys ([count, keys, d]).
    Tensor q = randn({count, 1, size}, gen, kFloat64);
    Tensor k = randn({count, keys, size}, gen, kFloat64);
    unscaled.add(nn::dot_score(q, k).data());
    scaled.add(nn::scaled_dot_score(q, k).data());
  }
  EntropyPoint point;
  point.size = size;
  point.unscaled = unscaled.mean_entropy_value();
  point.scaled = scaled.mean_entropy_value();
  point.unscaled_std = unscaled.score_std();
  point.scaled_std = scaled.score_std();
  point.unscaled_top = unscaled.mean_top();
  point.scaled_top = scaled.mean_top();
  point.unscaled_slope = unscaled.mean_slope();
  point.scaled_slope = scaled.mean_slope();
  return point;
}

}  // namespace attend::lesson05
