// (c) Are the gradients right? gradcheck (autograd/gradcheck.cpp) nudges every input
// element by +-eps, recomputes the function, and compares the slope it sees,
//   (f(x + eps) - f(x - eps)) / (2 eps),
// with what backward() computed. It runs in float64 with its default tolerances: an
// element passes when |analytic - numeric| <= atol + rtol * |numeric|, atol 1e-5, rtol 1e-3,
// eps 1e-6.
#include <cmath>

#include "lesson.h"

namespace attend::lesson02 {

GradcheckResult gradcheck_neuron(const NeuronValues& values) {
  Neuron nr = build_neuron(values, kFloat64);
  return gradcheck(neuron_output, {nr.x1, nr.x2, nr.w1, nr.w2, nr.b});
}

GradcheckResult gradcheck_mlp(Index hidden, std::uint64_t seed) {
  Generator gen(seed);
  Mlp mlp = init_mlp(hidden, gen, kFloat64);
  Dataset data = xor_dataset(kFloat64);
  // The function reads the parameters through `mlp`; gradcheck nudges them in place (they
  // are the same Tensors as the inputs listed) and restores them afterwards.
  auto loss = [&](const std::vector<Tensor>&) {
    return mse_loss(mlp_forward(mlp, data.x), data.y);
  };
  return gradcheck(loss, mlp.parameters());
}

std::string gradcheck_float32_message() {
  Neuron nr = build_neuron({}, kFloat32);
  try {
    gradcheck(neuron_output, {nr.x1, nr.x2, nr.w1, nr.w2, nr.b});
  } catch (const Error& e) {
    return e.what();
  }
  fail("gradcheck_float32_message: gradcheck accepted float32 inputs");
}

double central_difference_error(double x, double eps, DType dtype) {
  // Computed with NDArrays of `dtype`, so every step rounds as it would in that dtype.
  NDArray plus = tanh(NDArray::scalar(x, dtype) + eps);
  NDArray minus = tanh(NDArray::scalar(x, dtype) - eps);
  const double numeric = ((plus - minus) / (2 * eps)).item();
  const double exact = 1 - std::tanh(x) * std::tanh(x);
  return std::abs(numeric - exact);
}

}  // namespace attend::lesson02
