#include "nn/optim/clip.h"

#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/reduce.h"

namespace attend::optim {

double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm) {
  if (!(max_norm > 0) || !std::isfinite(max_norm))
    fail("clip_grad_norm: max_norm must be finite and > 0, got {}", max_norm);
  double sum_of_squares = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (!parameters[i].defined()) fail("clip_grad_norm: parameter {} is undefined", i);
    const NDArray& grad = parameters[i].node()->grad;
    if (grad.defined()) sum_of_squares += squared_norm(grad);
  }
  const double norm = std::sqrt(sum_of_squares);
  if (!std::isfinite(norm) || norm <= max_norm) return norm;

  const double scale = max_norm / (norm + 1e-6);
  for (const Tensor& p : parameters) {
    NDArray& grad = p.node()->grad;
    if (grad.defined()) grad = grad * scale;  // a new array, one fused pass
  }
  return norm;
}

}  // namespace attend::optim
