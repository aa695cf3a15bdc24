#include "nn/scaled_dot_product_attention.h"

#include <cmath>

#include "autograd/ops.h"
#include "nn/activation.h"

namespace attend::nn {
namespace {

void check_shapes(const Tensor& q, const Tensor& k, const Tensor& v) {
  constexpr std::string_view op = "scaled_dot_product_attention";
  if (q.ndim() < 2 || k.ndim() != q.ndim() || v.ndim() != q.ndim())
    fail("{}: q, k and v need the same number of axes (at least 2), got q {}, k {}, v {}", op,
         q.shape(), k.shape(), v.shape());
  for (int axis = 0; axis < q.ndim() - 2; ++axis)
    if (q.size(axis) != k.size(axis) || q.size(axis) != v.size(axis))
      fail("{}: the leading axes of q {}, k {} and v {} differ", op, q.shape(), k.shape(),
           v.shape());
  if (q.size(-1) != k.size(-1))
    fail("{}: queries and keys must have the same size, got q {} and k {}", op, q.shape(),
         k.shape());
  if (k.size(-2) != v.size(-2))
    fail("{}: keys and values must be as many, got k {} and v {}", op, k.shape(), v.shape());
}

}  // namespace

void check_mask_shape(const Shape& mask_shape, const Shape& scores_shape, std::string_view op,
                      std::string_view which) {
  bool fits = mask_shape.ndim() <= scores_shape.ndim();
  for (int i = 1; fits && i <= mask_shape.ndim(); ++i) {
    const Index m = mask_shape[mask_shape.ndim() - i];
    fits = m == 1 || m == scores_shape[scores_shape.ndim() - i];
  }
  if (!fits)
    fail("{}: {} of shape {} does not fit the attention scores {}", op, which, mask_shape,
         scores_shape);
}

Attended scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const SdpaOptions& options) {
  check_shapes(q, k, v);
  const double scale =
      options.scale != 0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Tensor scores = matmul(q, transpose(k, -2, -1)) * scale;  // [..., Tq, Tk]

  Mask mask = options.attn_mask;
  if (mask.defined())
    check_mask_shape(mask.shape(), scores.shape(), "scaled_dot_product_attention", "attn_mask");
  if (options.is_causal) {
    if (q.size(-2) != k.size(-2))
      fail("scaled_dot_product_attention: is_causal needs as many queries as keys, got q {}, k {}",
           q.shape(), k.shape());
    mask = mask.combined_with(causal_mask(q.size(-2)));
  }
  // Leading axes of 1 make the mask's rank the scores' rank, so that masked_softmax does not
  // read a [Tq, Tk] mask as its [B, Tk] padding mask.
  if (mask.defined() && mask.shape().ndim() < scores.ndim()) {
    std::vector<Index> sizes(scores.ndim() - mask.shape().ndim(), 1);
    for (int i = 0; i < mask.shape().ndim(); ++i) sizes.push_back(mask.shape()[i]);
    mask = mask.reshaped(Shape(sizes));
  }
  // The mask is applied before the softmax, so each row still sums to one over the keys it
  // may see; masking after it would leave rows that sum to less.
  if (mask.bias().defined()) scores = scores + to_dtype(mask.bias(), scores.dtype());
  Tensor weights = masked_softmax(scores, mask.keep_values());
  if (options.weights_hook) {
    const Shape before = weights.shape();
    weights = options.weights_hook(weights);
    if (!weights.defined() || weights.shape() != before)
      fail("scaled_dot_product_attention: the weights hook must return weights of shape {}, got {}",
           before, weights.defined() ? to_string(weights.shape()) : std::string("none"));
  }

  Tensor used = weights;
  if (options.dropout_p > 0)
    used = dropout(weights, options.dropout_p, /*training=*/true,
                   options.generator ? *options.generator : default_generator());
  return {matmul(used, v), weights};
}

}  // namespace attend::nn
