#include "nn/attention.h"

#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "nn/additive_score.h"

namespace attend::nn {
namespace {

void check_batched(const Tensor& x, std::string_view op, std::string_view what) {
  if (x.ndim() != 3) fail("{}: {} must be [B, T, D], got {}", op, what, x.shape());
}

// x [B, T, D] whose D is the `size` a projection of `module` expects.
void check_width(const Tensor& x, Index size, std::string_view module, std::string_view what) {
  check_batched(x, module, what);
  if (x.size(2) != size)
    fail("{}: {} {} must end in {} = {}, got {}", module, what, x.shape(),
         what == "keys" ? "key_size" : "query_size", size, x.size(2));
}

void check_same_batch(const Tensor& q, const Tensor& k, std::string_view op) {
  if (q.size(0) != k.size(0))
    fail("{}: queries {} and keys {} have different batch sizes", op, q.shape(), k.shape());
}

}  // namespace

Tensor masked_softmax(const Tensor& scores, const Tensor& mask) {
  if (!mask.defined()) return softmax(scores, -1);
  // A [B, Tk] mask applies to every query: make it [B, 1, Tk] to broadcast over Tq.
  Tensor keep = mask;
  if (scores.ndim() == 3 && mask.ndim() == 2) keep = unsqueeze(mask, 1);
  // The mask must broadcast to the scores' shape (a larger one would change the output's).
  bool fits = keep.ndim() <= scores.ndim();
  for (int i = 1; fits && i <= keep.ndim(); ++i)
    fits = keep.size(-i) == scores.size(-i) || keep.size(-i) == 1;
  if (!fits)
    fail(
        "masked_softmax: mask {} does not fit scores {} (a mask is [B, Tk], or broadcasts to "
        "the scores)",
        mask.shape(), scores.shape());
  if (keep.dtype() != scores.dtype()) keep = to_dtype(keep, scores.dtype());
  Tensor masked_out = eq(keep, zeros({}, scores.dtype()));
  // exp(-inf) is exactly 0, so masked keys get exactly 0 weight.
  return softmax(masked_fill(scores, masked_out, -std::numeric_limits<double>::infinity()), -1);
}

Tensor dot_score(const Tensor& queries, const Tensor& keys) {
  check_batched(queries, "dot_score", "queries");
  check_batched(keys, "dot_score", "keys");
  check_same_batch(queries, keys, "dot_score");
  if (queries.size(2) != keys.size(2))
    fail(
        "dot_score: query size {} and key size {} differ (queries {}, keys {}); a dot product "
        "needs equal sizes: project one side first (GeneralScore or AdditiveScore)",
        queries.size(2), keys.size(2), queries.shape(), keys.shape());
  return matmul(queries, transpose(keys, 1, 2));
}

Tensor scaled_dot_score(const Tensor& queries, const Tensor& keys) {
  // Vaswani et al. 2017, eq. 1: with unit-variance entries, q.k has variance D; dividing
  // by sqrt(D) keeps the softmax out of its saturated, near-one-hot regime.
  return dot_score(queries, keys) * (1.0 / std::sqrt(static_cast<double>(queries.size(2))));
}

GeneralScore::GeneralScore(Index query_size, Index key_size, Generator& gen)
    : key_projection(key_size, query_size, /*bias=*/false, gen) {
  register_module("key_projection", key_projection);
}

Tensor GeneralScore::forward(const Tensor& queries, const Tensor& keys) {
  check_width(keys, key_projection.weight.size(1), "GeneralScore", "keys");
  check_width(queries, key_projection.weight.size(0), "GeneralScore", "queries");
  return dot_score(queries, key_projection(keys));
}

std::string GeneralScore::describe() const {
  return fmt::format("GeneralScore(query {}, key {})", key_projection.weight.size(0),
                     key_projection.weight.size(1));
}

AdditiveScore::AdditiveScore(Index query_size, Index key_size, Index hidden, Generator& gen)
    : query_projection(query_size, hidden, /*bias=*/false, gen),
      key_projection(key_size, hidden, /*bias=*/true, gen),
      to_score(hidden, 1, /*bias=*/false, gen) {
  register_module("query_projection", query_projection);
  register_module("key_projection", key_projection);
  register_module("to_score", to_score);
}

Tensor AdditiveScore::project_keys(const Tensor& keys) {
  check_width(keys, key_projection.weight.size(1), "AdditiveScore", "keys");
  return key_projection(keys);
}

Tensor AdditiveScore::score(const Tensor& queries, const Tensor& projected_keys) {
  check_width(queries, query_projection.weight.size(1), "AdditiveScore", "queries");
  check_batched(projected_keys, "AdditiveScore", "projected keys");
  check_same_batch(queries, projected_keys, "AdditiveScore");
  // One op (nn/additive_score.h) for squeeze(to_score(tanh(unsqueeze(W q, 2) +
  // unsqueeze(U k, 1))), 3): the same numbers, bit for bit, without the [B, Tq, Tk, A]
  // intermediates of the composed graph.
  return additive_score(query_projection(queries), projected_keys, to_score.weight);
}

std::string AdditiveScore::describe() const {
  return fmt::format("AdditiveScore(query {}, key {}, hidden {})", query_projection.weight.size(1),
                     key_projection.weight.size(1), query_projection.weight.size(0));
}

Attended attend(const Tensor& scores, const Tensor& values, const Tensor& mask) {
  check_batched(scores, "attend", "scores");
  check_batched(values, "attend", "values");
  if (scores.size(2) != values.size(1) || scores.size(0) != values.size(0))
    fail("attend: scores {} do not match values {} (need [B, Tq, Tk] and [B, Tk, Dv])",
         scores.shape(), values.shape());
  Attended out;
  out.weights = masked_softmax(scores, mask);
  out.context = matmul(out.weights, values);
  return out;
}

}  // namespace attend::nn
