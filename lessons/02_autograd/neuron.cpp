// (a) One neuron, o = tanh(x1*w1 + x2*w2 + b), the example of Karpathy's micrograd.
//
// Building it records a graph: every op (autograd/ops_elementwise.cpp) computes its value
// and, because its inputs require a gradient, a Node with its inputs and backward formula.
// o.backward() then walks that graph from o back to the leaves (autograd/backward.cpp).
#include <cmath>

#include "lesson.h"

namespace attend::lesson02 {
namespace {

Tensor leaf(double value, const char* name, DType dtype) {
  Tensor t = tensor({value}, dtype).requires_grad_();
  t.set_name(name);
  return t;
}

Tensor named(Tensor t, const char* name) {
  t.set_name(name);
  return t;
}

}  // namespace

Neuron build_neuron(const NeuronValues& v, DType dtype) {
  Neuron nr;
  nr.x1 = leaf(v.x1, "x1", dtype);
  nr.x2 = leaf(v.x2, "x2", dtype);
  nr.w1 = leaf(v.w1, "w1", dtype);
  nr.w2 = leaf(v.w2, "w2", dtype);
  nr.b = leaf(v.b, "b", dtype);
  nr.x1w1 = named(nr.x1 * nr.w1, "x1*w1");
  nr.x2w2 = named(nr.x2 * nr.w2, "x2*w2");
  nr.x1w1x2w2 = named(nr.x1w1 + nr.x2w2, "x1*w1 + x2*w2");
  nr.n = named(nr.x1w1x2w2 + nr.b, "n");
  nr.o = named(tanh(nr.n), "o");
  return nr;
}

Tensor neuron_output(const std::vector<Tensor>& leaves) {
  if (leaves.size() != 5)
    fail("neuron_output: needs {{x1, x2, w1, w2, b}}, got {} tensors", leaves.size());
  const Tensor &x1 = leaves[0], &x2 = leaves[1], &w1 = leaves[2], &w2 = leaves[3], &b = leaves[4];
  return tanh(x1 * w1 + x2 * w2 + b);
}

NeuronGradients neuron_gradients_by_hand(const NeuronValues& v) {
  NeuronGradients g;
  const double n = v.x1 * v.w1 + v.x2 * v.w2 + v.b;
  const double o = std::tanh(n);
  g.o = 1.0;          // do/do
  g.n = 1.0 - o * o;  // d tanh(n)/dn = 1 - tanh(n)^2
  // n = x1*w1 + x2*w2 + b: a sum passes do/dn unchanged to each term (d(u+v)/du = 1), and a
  // product u*v sends to u the gradient times v (d(uv)/du = v).
  g.b = g.n;
  g.x1 = g.n * v.w1;
  g.w1 = g.n * v.x1;
  g.x2 = g.n * v.w2;
  g.w2 = g.n * v.x2;
  return g;
}

Accumulation accumulation_demo() {
  Accumulation result;
  Tensor a = tensor({3.0}, kFloat64).requires_grad_();
  auto c_of = [](const Tensor& a) {
    Tensor b = a + a;  // a is used twice: db/da = 1 + 1 = 2
    return b + b;      // b is used twice: dc/db = 2, so dc/da = 2 * 2 = 4
  };
  c_of(a).backward();
  result.first = a.grad().item();
  c_of(a).backward();  // a new graph; its gradient is added to the 4 already there
  result.second = a.grad().item();
  a.zero_grad();
  result.defined_after_zero = a.grad().defined();
  c_of(a).backward();
  result.after_zero = a.grad().item();
  return result;
}

}  // namespace attend::lesson02
