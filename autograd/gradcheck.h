// gradcheck: does backward() compute the right gradient? It compares the analytic gradient
// (from backward) with a numeric one from central differences,
//     dL/dx_j ~ (L(x + eps e_j) - L(x - eps e_j)) / (2 eps),
// for every element x_j of every input that requires a gradient. The error of a central
// difference shrinks like eps^2, but rounding grows like 1/eps, so this needs float64:
// in float32 half of the digits would be noise.
//
// A function with a non-scalar output is reduced to L = sum(output * R) with a fixed random
// R, which checks the whole Jacobian against one random direction (a wrong entry cannot
// hide except by an exact coincidence).
//
//   Tensor x = randn({3, 4}, gen, kFloat64).requires_grad_();
//   auto result = gradcheck([](const std::vector<Tensor>& in) { return tanh(in[0]); }, {x});
//   if (!result) fmt::print("{}\n", result.report);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attend {

struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // an element passes if |analytic - numeric| <= atol + rtol * |numeric|
  double rtol = 1e-3;
  // For big inputs (model parameters) check this many elements of each input, picked at
  // random with `seed`; 0 checks every element.
  Index max_elements_per_input = 0;
  std::uint64_t seed = 0;
};

struct GradcheckResult {
  bool ok = true;
  std::string report;  // what was checked and, on failure, where and by how much it failed
  double max_abs_error = 0;
  double max_rel_error = 0;  // |analytic - numeric| / max(|numeric|, atol)
  Index elements_checked = 0;
  std::vector<std::string> ops;  // the ops found in the checked graph, sorted
  explicit operator bool() const { return ok; }
};

using TensorFunction = std::function<Tensor(const std::vector<Tensor>& inputs)>;

// inputs: the tensors f reads; those with requires_grad are checked (they must be
// float64). They may also be captured by f (a module's parameters): gradcheck changes
// their values in place and restores them. Their .grad is reset first.
GradcheckResult gradcheck(const TensorFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

// The names of the ops in the graph behind t (sorted, each once).
std::vector<std::string> graph_ops(const Tensor& t);

}  // namespace attend
