// Lesson 02: automatic differentiation. The functions that main.cpp runs, in the order of
// the chapter (docs/02_autograd.md), one file each:
//
//   neuron.cpp       (a) o = tanh(x1*w1 + x2*w2 + b): its graph, backward(), the gradients
//                        by hand; retain_grad, gradient accumulation and zero_grad
//   mlp.cpp          (b) a 2 -> 8 -> 1 tanh network from raw Tensors, trained by gradient
//                        descent on four points
//   checks.cpp       (c) gradcheck of both, in float64, and why float64
//   custom_ops.cpp   (d) a sigmoid op with a wrong backward that gradcheck catches, the
//                        fixed one, and the reference solutions of the exercises
#pragma once

#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson02 {

// ---- (a) one neuron: neuron.cpp -------------------------------------------------------------

// micrograd's example values. b is chosen so that n = x1*w1 + x2*w2 + b = 0.8813735870...,
// where tanh(n) = 1/sqrt(2) and the local derivative 1 - o^2 is exactly 1/2.
struct NeuronValues {
  double x1 = 2.0, x2 = 0.0;
  double w1 = -3.0, w2 = 1.0;
  double b = 6.8813735870195432;
};

// Every tensor of the neuron's graph, named as in the chapter (the names label the drawing).
struct Neuron {
  Tensor x1, x2, w1, w2, b;  // the leaves; all of them require a gradient
  Tensor x1w1, x2w2, x1w1x2w2, n, o;
};
Neuron build_neuron(const NeuronValues& values = {}, DType dtype = kFloat64);

// The same computation as a function of the leaves {x1, x2, w1, w2, b}, for gradcheck.
Tensor neuron_output(const std::vector<Tensor>& leaves);

// The gradients do/d(.) derived by hand with the chain rule, in plain double arithmetic:
//   do/dn = 1 - o^2,  do/dw1 = do/dn * x1,  do/dx1 = do/dn * w1,  ...,  do/db = do/dn.
struct NeuronGradients {
  double o = 0, n = 0, x1 = 0, x2 = 0, w1 = 0, w2 = 0, b = 0;
};
NeuronGradients neuron_gradients_by_hand(const NeuronValues& values);

// b = a + a; c = b + b with a = 3. Each use of a tensor adds its share to the gradient:
//   dc/da = 4. Gradients also add up across backward() calls until zero_grad().
struct Accumulation {
  double first = 0;                // a.grad after one backward()
  double second = 0;               // after a second backward() through a fresh c
  bool defined_after_zero = true;  // a.grad().defined() right after a.zero_grad()
  double after_zero = 0;           // after zero_grad() and a third backward()
};
Accumulation accumulation_demo();

// ---- (b) a tiny MLP: mlp.cpp --------------------------------------------------------------

constexpr Index kInputs = 2, kOutputs = 1;

// Four points: XOR written with -1 and +1. The label is +1 when the two inputs differ.
// No straight line separates them, so the hidden layer is needed.
struct Dataset {
  Tensor x;  // [4, kInputs]
  Tensor y;  // [4, kOutputs]
};
Dataset xor_dataset(DType dtype = kFloat32);

// prediction = tanh(x @ w1 + b1) @ w2 + b2, with parameters
//   w1 [kInputs, hidden], b1 [hidden], w2 [hidden, kOutputs], b2 [kOutputs].
struct Mlp {
  Tensor w1, b1, w2, b2;
  std::vector<Tensor> parameters() const { return {w1, b1, w2, b2}; }
};
// Weights from N(0, 1/fan_in) (the variance of a sum of fan_in terms stays near 1, so tanh
// starts in its steep middle part); biases zero.
Mlp init_mlp(Index hidden, Generator& gen, DType dtype = kFloat32);
Tensor mlp_forward(const Mlp& mlp, const Tensor& x);
// Mean squared error: mean((prediction - target)^2), a 0-d tensor.
Tensor mse_loss(const Tensor& prediction, const Tensor& target);
// One gradient-descent step: zero the gradients, forward, backward, p -= lr * dL/dp.
// Returns the loss before the update. A loss that is inf or NaN stops it before backward()
// and the update, with an Error naming `step` (its number, from 0) and the learning rate.
double sgd_step(Mlp& mlp, const Dataset& data, double lr, int step = 0);
// `steps` calls of sgd_step; the loss of each step, in order.
std::vector<double> train_mlp(Mlp& mlp, const Dataset& data, int steps, double lr);
// The loss without recording a graph (NoGradGuard).
double evaluate_loss(const Mlp& mlp, const Dataset& data);

// ---- (c) gradcheck: checks.cpp -----------------------------------------------------------

// gradcheck (float64, its default tolerances) of the neuron with respect to its 5 leaves.
GradcheckResult gradcheck_neuron(const NeuronValues& values = {});
// gradcheck of the MLP's loss with respect to its parameters, built in float64 from `seed`.
GradcheckResult gradcheck_mlp(Index hidden, std::uint64_t seed);
// What gradcheck says when given float32 inputs (it refuses them).
std::string gradcheck_float32_message();

// The central difference (f(x+eps) - f(x-eps)) / (2 eps) of tanh at x, computed in dtype,
// minus the exact derivative 1 - tanh(x)^2: how many digits each dtype keeps.
double central_difference_error(double x, double eps, DType dtype);

// ---- (d) custom ops: custom_ops.cpp ------------------------------------------------------

// sigmoid y = 1 / (1 + e^-x), whose derivative is y (1 - y). This backward returns g * y:
// it forgets the (1 - y) factor, and gradcheck catches it.
Tensor sigmoid_forgetting_one_minus_y(const Tensor& x);
// The corrected op: backward g * y * (1 - y).
Tensor sigmoid_custom(const Tensor& x);
// gradcheck of op on a random float64 [2,3] input drawn from `seed`.
GradcheckResult gradcheck_unary(Tensor (*op)(const Tensor&), std::uint64_t seed);

// Exercise 1: softplus y = log(1 + e^x) as a custom op; dy/dx = 1 / (1 + e^-x) = sigmoid(x).
Tensor softplus_reference(const Tensor& x);
// Exercise 2: z = a * b as a custom op; dz/da = b, dz/db = a (summed back over broadcast axes).
Tensor mul_reference(const Tensor& a, const Tensor& b);

}  // namespace attend::lesson02
