// Gradient clipping by global norm (Pascanu et al. 2013), PyTorch's
// torch.nn.utils.clip_grad_norm_. One bad batch can produce a huge gradient that throws a
// model far from where it was; clipping caps the length of the step direction while keeping
// its direction. Call it between backward() and step():
//
//   loss.backward();
//   double norm = optim::clip_grad_norm(model.parameters(), 1.0);  // worth logging
//   optimizer.step();
#pragma once

#include <vector>

#include "autograd/tensor.h"

namespace attend::optim {

// The global L2 norm of all gradients, as if they were one long vector:
//   norm = sqrt(sum over parameters of sum(grad^2))      (accumulated in double)
// If norm > max_norm, every gradient is multiplied by max_norm / (norm + 1e-6), so that the
// new norm is just under max_norm. Returns the norm before clipping. Parameters without a
// gradient are skipped; with none at all the norm is 0.
//
// A non-finite norm (a NaN or infinite gradient somewhere) is returned as it is and nothing
// is scaled: scaling by max_norm / inf would silently zero every gradient, and by NaN would
// spread the NaN to all of them. Check the returned norm (std::isfinite) to skip such a step.
//
// Differences from PyTorch: PyTorch multiplies by min(1, max_norm / (norm + 1e-6)), so it
// also shrinks gradients whose norm is within 1e-6 below max_norm (by less than 1e-6
// relative); here a norm <= max_norm leaves the gradients untouched. PyTorch scales a
// non-finite norm anyway unless error_if_nonfinite is set.
//
// The scaled gradients are new arrays: backward() may give several parameters the same
// gradient array (a + b hands both the same one), and scaling it in place would scale it
// once per parameter that shares it.
double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm);

}  // namespace attend::optim
