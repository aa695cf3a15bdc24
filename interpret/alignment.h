// Where did a model look? Attention weights read against the truth: alignment accuracy
// (is the most-attended source position inside the span the output comes from?), the
// attention of one output as a heatmap matrix, and the invariants every attention
// distribution must satisfy.
//
//   AlignmentScore s = interpret::alignment_accuracy(examples, weights);   // s.accuracy()
#pragma once

#include <vector>

#include "autograd/tensor.h"
#include "nn/data/dates.h"

namespace attend::interpret {

// For every output digit of every date (the '-' separators have no source and are
// skipped): is the input position with the largest attention weight alpha_ij inside the
// span the digit comes from? weights[e][i] is alpha_i over the input positions for output
// character i of example e (from decoding); a digit the model did not produce counts as a
// miss.
struct AlignmentScore {
  int digits = 0, hits = 0;
  double accuracy() const { return digits > 0 ? static_cast<double>(hits) / digits : 0.0; }
};
AlignmentScore alignment_accuracy(const std::vector<data::DateExample>& examples,
                                  const std::vector<std::vector<std::vector<double>>>& weights);

// The attention of one output, weights[i] = alpha_i over the source positions (padding
// included), as a [outputs, source_length] matrix (the padding columns dropped), ready for
// viz::plot_attention.
NDArray attention_matrix(const std::vector<std::vector<double>>& weights, Index source_length);

// What attention weights [B, T, S] must satisfy: every row alpha_i sums to 1 over the source,
// and padded source positions get exactly 0.
struct AttentionInvariants {
  Index rows = 0, masked_positions = 0;  // how many were checked
  double largest_row_sum_error = 0;      // max |sum_j alpha_ij - 1|
  double largest_masked_weight = 0;      // max alpha_ij at padding: must be exactly 0
};
AttentionInvariants check_attention(const Tensor& weights, const Tensor& source_mask);

}  // namespace attend::interpret
