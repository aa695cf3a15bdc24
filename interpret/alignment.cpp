// Where attention looked: alignment accuracy against the true source spans, the matrix of a
// heatmap, and the invariants every attention distribution satisfies.
#include "interpret/alignment.h"

#include <algorithm>
#include <cmath>

#include "tensor/error.h"

namespace attend::interpret {

using data::DateExample;

AlignmentScore alignment_accuracy(const std::vector<DateExample>& examples,
                                  const std::vector<std::vector<std::vector<double>>>& weights) {
  if (examples.size() != weights.size())
    fail("alignment_accuracy: {} examples and {} attention records", examples.size(),
         weights.size());
  AlignmentScore score;
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const DateExample& example = examples[e];
    for (std::size_t i = 0; i < example.source.size(); ++i) {
      const data::Span& span = example.source[i];
      if (span.empty()) continue;  // a '-': it comes from nowhere in the input
      ++score.digits;
      if (i >= weights[e].size()) continue;  // the model stopped before this digit
      const std::vector<double>& alpha = weights[e][i];
      // The first of equal maxima, like argmax.
      const auto most_attended = std::max_element(alpha.begin(), alpha.end()) - alpha.begin();
      score.hits += span.contains(static_cast<int>(most_attended));
    }
  }
  return score;
}

NDArray attention_matrix(const std::vector<std::vector<double>>& weights, Index source_length) {
  const Index rows = static_cast<Index>(weights.size());
  if (rows == 0) fail("attention_matrix: the output has no recorded attention");
  NDArray matrix = NDArray::zeros({rows, source_length}, kFloat64);
  for (Index i = 0; i < rows; ++i) {
    const std::vector<double>& alpha = weights[static_cast<std::size_t>(i)];
    if (static_cast<Index>(alpha.size()) < source_length)
      fail("attention_matrix: {} weights in row {}, fewer than the {} source tokens", alpha.size(),
           i, source_length);
    for (Index j = 0; j < source_length; ++j)
      matrix.data<double>()[i * source_length + j] = alpha[static_cast<std::size_t>(j)];
  }
  return matrix;
}

AttentionInvariants check_attention(const Tensor& weights, const Tensor& source_mask) {
  if (!weights.defined()) fail("check_attention: the model recorded no attention weights");
  const Index B = weights.size(0), T = weights.size(1), S = weights.size(2);
  if (source_mask.shape() != Shape{B, S})
    fail("check_attention: weights {} do not match the mask {}", weights.shape(),
         source_mask.shape());
  const NDArray w = weights.data().to(kFloat64), keep = source_mask.data().to(kFloat64);
  AttentionInvariants result;
  for (Index b = 0; b < B; ++b)
    for (Index i = 0; i < T; ++i) {
      double row_sum = 0;
      for (Index j = 0; j < S; ++j) {
        const double alpha = w.data<double>()[(b * T + i) * S + j];
        row_sum += alpha;
        if (keep.data<double>()[b * S + j] == 0) {
          result.largest_masked_weight = std::max(result.largest_masked_weight, std::abs(alpha));
          ++result.masked_positions;
        }
      }
      result.largest_row_sum_error = std::max(result.largest_row_sum_error, std::abs(row_sum - 1));
      ++result.rows;
    }
  return result;
}

}  // namespace attend::interpret
