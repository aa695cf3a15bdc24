// Helpers for the optimizer tests.
#pragma once

#include "nn/optim/optim.h"
#include "support.h"

namespace attend::testing {

// A parameter (requires grad) with the given values.
inline Tensor parameter(std::initializer_list<double> values, DType dtype) {
  return tensor(values, dtype).requires_grad_();
}

// Gives p exactly the gradient g, through backward(): d/dp sum(p * g) = g.
inline void set_grad(Tensor p, std::initializer_list<double> g) {
  p.zero_grad();
  sum(p * Tensor(NDArray::from_list(g, p.shape(), p.dtype()))).backward();
}

// Comparisons of hand-computed values: float64 holds them to rounding, float32 to ~1e-7
// relative, so a few float32 operations on values of size ~1 stay within 2e-6.
inline double tolerance_for(DType dtype) {
  return dtype == kFloat64 ? 1e-12 : 2e-6;
}

}  // namespace attend::testing
