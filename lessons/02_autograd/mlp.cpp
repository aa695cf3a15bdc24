// (b) A multi-layer perceptron from raw Tensors: 2 inputs -> `hidden` tanh units -> 1
// output, trained by plain gradient descent. No module library (nn/ is a later lesson's
// subject): the parameters are four Tensors, the model is one line, the optimizer three.
#include <cmath>

#include "lesson.h"

namespace attend::lesson02 {

Dataset xor_dataset(DType dtype) {
  Dataset d;
  d.x = tensor({-1, -1,  //
                -1, 1,   //
                1, -1,   //
                1, 1},
               {4, kInputs}, dtype);
  d.y = tensor({-1, 1, 1, -1}, {4, kOutputs}, dtype);
  d.x.set_name("x");
  d.y.set_name("y");
  return d;
}

namespace {

// A [fan_in, fan_out] weight with entries from N(0, 1/fan_in), as a parameter.
Tensor weight(Index fan_in, Index fan_out, Generator& gen, DType dtype, const char* name) {
  NDArray w = NDArray::normal({fan_in, fan_out}, gen, 0, 1 / std::sqrt(double(fan_in)), dtype);
  Tensor t(w, /*requires_grad=*/true);
  t.set_name(name);
  return t;
}

Tensor bias(Index size, DType dtype, const char* name) {
  Tensor t = zeros({size}, dtype).requires_grad_();
  t.set_name(name);
  return t;
}

}  // namespace

Mlp init_mlp(Index hidden, Generator& gen, DType dtype) {
  if (hidden < 1) fail("init_mlp: the hidden layer needs at least 1 unit, got {}", hidden);
  Mlp mlp;
  mlp.w1 = weight(kInputs, hidden, gen, dtype, "w1");
  mlp.b1 = bias(hidden, dtype, "b1");
  mlp.w2 = weight(hidden, kOutputs, gen, dtype, "w2");
  mlp.b2 = bias(kOutputs, dtype, "b2");
  return mlp;
}

Tensor mlp_forward(const Mlp& mlp, const Tensor& x) {
  // [N,2] @ [2,H] + [H] -> [N,H]: the bias broadcasts over the N rows (lesson 01), and its
  // gradient is summed back over them (sum_to in add's backward).
  Tensor h = tanh(matmul(x, mlp.w1) + mlp.b1);
  return matmul(h, mlp.w2) + mlp.b2;  // [N,H] @ [H,1] + [1] -> [N,1]
}

Tensor mse_loss(const Tensor& prediction, const Tensor& target) {
  Tensor error = prediction - target;
  return mean(error * error);
}

double sgd_step(Mlp& mlp, const Dataset& data, double lr, int step) {
  // backward() adds into .grad, so the gradients of the previous step must go first.
  // (A Tensor is a handle: the copies that parameters() returns share the same nodes.)
  for (Tensor p : mlp.parameters()) p.zero_grad();
  Tensor loss = mse_loss(mlp_forward(mlp, data.x), data.y);
  // Too large a step overshoots the minimum, further each time, until the numbers overflow.
  // An infinite or NaN loss would make every gradient and then every parameter inf or NaN:
  // stop here, before backward() and the update, naming the step and the learning rate.
  optim::check_loss_is_finite(fmt::format("train_mlp (learning rate {})", lr), step, loss.item());
  loss.backward();
  // The update works on the NDArrays behind the Tensors, so it records nothing in a graph.
  for (const Tensor& p : mlp.parameters()) add_(p.data(), p.grad().data(), -lr);  // p -= lr*g
  return loss.item();
}

std::vector<double> train_mlp(Mlp& mlp, const Dataset& data, int steps, double lr) {
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) losses.push_back(sgd_step(mlp, data, lr, step));
  return losses;
}

double evaluate_loss(const Mlp& mlp, const Dataset& data) {
  NoGradGuard no_graph;  // nothing will call backward(): record nothing
  return mse_loss(mlp_forward(mlp, data.x), data.y).item();
}

}  // namespace attend::lesson02
