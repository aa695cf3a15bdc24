#include "nn/attention_mask.h"

#include <cmath>

#include "autograd/ops.h"

namespace attend::nn {
namespace {

// Masks never carry gradients: their values are read once, in float32.
Tensor as_float(const Tensor& x) {
  return Tensor(x.data().to(kFloat32));
}

}  // namespace

Mask Mask::blocked(const Tensor& blocked) {
  Mask mask;
  if (!blocked.defined()) return mask;
  mask.keep_ = eq(as_float(blocked), zeros({}));
  return mask;
}

Mask Mask::keep(const Tensor& keep) {
  Mask mask;
  if (!keep.defined()) return mask;
  mask.keep_ = ne(as_float(keep), zeros({}));
  return mask;
}

Mask Mask::additive(const Tensor& additive) {
  Mask mask;
  if (!additive.defined()) return mask;
  // The bias keeps the mask's dtype (a float64 mask stays exact for gradchecks).
  const DType dtype = additive.dtype() == kFloat64 ? kFloat64 : kFloat32;
  NDArray values = additive.data().to(kFloat64);
  NDArray keep = NDArray::empty(values.shape(), kFloat32);
  NDArray bias = NDArray::empty(values.shape(), kFloat64);
  auto v = values.span<double>();
  auto k = keep.span<float>();
  auto b = bias.span<double>();
  bool any_bias = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i]) || v[i] == INFINITY)
      fail("Mask::additive: element {} is {}; an additive mask holds finite numbers or -inf", i,
           v[i]);
    const bool blocked = v[i] == -INFINITY;
    k[i] = blocked ? 0.0f : 1.0f;
    b[i] = blocked ? 0.0 : v[i];
    any_bias = any_bias || b[i] != 0.0;
  }
  mask.keep_ = Tensor(keep);
  if (any_bias) mask.bias_ = Tensor(bias.to(dtype));
  return mask;
}

Mask Mask::reshaped(const Shape& shape) const {
  Mask out;
  if (!defined()) return out;
  out.keep_ = reshape(keep_, shape);
  if (bias_.defined()) out.bias_ = reshape(bias_, shape);
  return out;
}

Mask Mask::combined_with(const Mask& other) const {
  if (!defined()) return other;
  if (!other.defined()) return *this;
  Mask out;
  out.keep_ = keep_ * other.keep_;
  if (bias_.defined() && other.bias_.defined())
    out.bias_ = bias_.dtype() == other.bias_.dtype()
                    ? bias_ + other.bias_
                    : to_dtype(bias_, kFloat64) + to_dtype(other.bias_, kFloat64);
  else
    out.bias_ = bias_.defined() ? bias_ : other.bias_;
  return out;
}

Mask causal_mask(Index T) {
  if (T < 1) fail("causal_mask: the length must be at least 1, got {}", T);
  NDArray blocked = NDArray::zeros({T, T});
  float* b = blocked.data<float>();
  for (Index query = 0; query < T; ++query)
    for (Index key = query + 1; key < T; ++key) b[query * T + key] = 1.0f;
  return Mask::blocked(Tensor(blocked));
}

}  // namespace attend::nn
