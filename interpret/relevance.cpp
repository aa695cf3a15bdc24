// Gradient-weighted attention relevance: see relevance.h for the equations.
#include "interpret/relevance.h"

#include <algorithm>

#include "tensor/error.h"

namespace attend::interpret {

NDArray gradient_weighted_attention(const NDArray& attention, const NDArray& gradient) {
  if (attention.ndim() != 3 || attention.size(0) < 1 || attention.shape() != gradient.shape())
    fail(
        "gradient_weighted_attention: attention {} and gradient {} must both be [H, Tq, Tk] "
        "(heads, queries, keys)",
        attention.shape(), gradient.shape());
  const Index heads = attention.size(0), cells = attention.size(1) * attention.size(2);
  const std::vector<double> a = attention.to_vector(), g = gradient.to_vector();
  NDArray weighted = NDArray::zeros({attention.size(1), attention.size(2)}, kFloat64);
  double* w = weighted.data<double>();
  for (Index h = 0; h < heads; ++h)
    for (Index c = 0; c < cells; ++c)
      w[c] += std::max(g[h * cells + c] * a[h * cells + c], 0.0);        // (∇A ⊙ A)^+ per head
  for (Index c = 0; c < cells; ++c) w[c] /= static_cast<double>(heads);  // E_h
  return weighted;
}

NDArray attention_relevance(const std::vector<NDArray>& attentions,
                            const std::vector<NDArray>& gradients) {
  if (attentions.empty() || attentions.size() != gradients.size())
    fail("attention_relevance: {} blocks of attention but {} gradients (one per block, >= 1)",
         attentions.size(), gradients.size());
  const NDArray& first = attentions.front();
  if (first.ndim() != 3 || first.size(1) != first.size(2))
    fail("attention_relevance: self-attention must be [H, T, T], got {}", first.shape());
  const Index tokens = first.size(1);
  NDArray relevance = NDArray::zeros({tokens, tokens}, kFloat64);
  double* r = relevance.data<double>();
  for (Index i = 0; i < tokens; ++i) r[i * tokens + i] = 1;  // R = I
  std::vector<double> update(static_cast<std::size_t>(tokens * tokens));
  for (std::size_t b = 0; b < attentions.size(); ++b) {
    const NDArray weighted = gradient_weighted_attention(attentions[b], gradients[b]);
    if (weighted.size(0) != tokens || weighted.size(1) != tokens)
      fail("attention_relevance: block {} has attention {} but block 1 has {}", b + 1,
           attentions[b].shape(), attentions.front().shape());
    const double* w = weighted.data<double>();
    std::fill(update.begin(), update.end(), 0.0);  // Ā · R, then R += it: eq. (6)
    for (Index i = 0; i < tokens; ++i)
      for (Index k = 0; k < tokens; ++k)
        for (Index j = 0; j < tokens; ++j)
          update[i * tokens + j] += w[i * tokens + k] * r[k * tokens + j];
    for (Index c = 0; c < tokens * tokens; ++c) r[c] += update[c];
  }
  return relevance;
}

}  // namespace attend::interpret
