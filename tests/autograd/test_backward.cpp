#include <memory>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("a neuron: gradients by hand", "[autograd]") {
  // y = tanh(w . x + b): dy/dw = (1 - y^2) x, dy/db = 1 - y^2
  Tensor x = tensor({2.0, -1.0}, kFloat64);
  Tensor w = tensor({0.5, 0.25}, kFloat64).requires_grad_();
  Tensor b = tensor({0.1}, kFloat64).requires_grad_();
  Tensor y = tanh(sum(w * x) + b);
  y.backward();
  double yv = std::tanh(0.5 * 2 - 0.25 + 0.1), d = 1 - yv * yv;
  CHECK_THAT(y.item(), Catch::Matchers::WithinAbs(yv, 1e-15));
  check_close(w.grad().data(), f64({d * 2, -d}, {2}), 1e-15);
  check_close(b.grad().data(), f64({d}, {1}), 1e-15);
  CHECK_FALSE(x.grad().defined());  // x does not require grad
}

TEST_CASE("a reused node gets the sum of its gradients (b = a + a, c = b + b)", "[autograd]") {
  Tensor a = tensor({3.0}, kFloat64).requires_grad_();
  Tensor b = a + a;
  Tensor c = b + b;
  c.backward();
  CHECK(a.grad().item() == 4);
  Tensor d = a * a;  // dd/da = 2a = 6, accumulates onto the 4 until zero_grad
  d.backward();
  CHECK(a.grad().item() == 10);
  a.zero_grad();
  CHECK_FALSE(a.grad().defined());
  (a * a).backward();
  CHECK(a.grad().item() == 6);
}

TEST_CASE("backward twice: an error unless the graph is retained", "[autograd]") {
  Tensor a = tensor({2.0}, kFloat64).requires_grad_();
  Tensor y = exp(a) * a;
  y.backward(BackwardOptions{.retain_graph = true});
  double once = a.grad().item();
  y.backward();  // allowed: the first call kept the graph
  CHECK(a.grad().item() == 2 * once);
  CHECK_THAT(error_message([&] { y.backward(); }),
             Contains("was already used by backward() and freed"));
}

TEST_CASE("backward needs a scalar or an explicit gradient", "[autograd]") {
  Tensor a = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = a * a;
  CHECK_THAT(error_message([&] { y.backward(); }), Contains("backward: the tensor has shape [2]"));
  y.backward(f64({1, 10}, {2}));
  check_close(a.grad().data(), f64({2, 40}, {2}));
  CHECK_THAT(error_message([&] {
               (a * a).backward(f64({1, 2, 3}, {3}));
             }),
             Contains("grad_output [3] float64 must match the tensor [2] float64"));
  Tensor constant = tensor({1.0});
  CHECK_THAT(error_message([&] { (constant * 2.0).backward(); }),
             Contains("backward: this tensor does not require grad"));
}

TEST_CASE("broadcast gradients are reduced to each input's shape", "[autograd]") {
  Tensor m = ones({4, 3}, kFloat64).requires_grad_();
  Tensor row = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  Tensor col = ones({4, 1}, kFloat64).requires_grad_();
  sum(m * row + col).backward();
  CHECK(row.grad().shape() == Shape{3});
  check_close(row.grad().data(), f64({4, 4, 4}, {3}));
  CHECK(col.grad().shape() == Shape{4, 1});
  check_close(col.grad().data(), f64({3, 3, 3, 3}, {4, 1}));
  check_close(m.grad().data(), broadcast_to(f64({1, 2, 3}, {3}), {4, 3}));
}

TEST_CASE("backward through a 100,000-op chain needs no recursion", "[autograd]") {
  Tensor x = tensor({1.0}, kFloat64).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  y.backward();
  CHECK(x.grad().item() == 1.0);
  // Destroying the chain is iterative too (a recursive destructor would overflow here).
  y = Tensor();
  SUCCEED();
}

TEST_CASE("no_grad records nothing; detach cuts the graph", "[autograd]") {
  Tensor w = tensor({2.0}, kFloat64).requires_grad_();
  {
    NoGradGuard guard;
    Tensor y = w * w;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.is_leaf());
  }
  CHECK(grad_enabled());
  Tensor z = w * w;
  CHECK(z.requires_grad());
  CHECK(z.op() == "mul");
  Tensor d = z.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK_THAT(error_message([&] { z.requires_grad_(); }), Contains("only leaf tensors"));
}

TEST_CASE("retain_grad and hooks expose intermediate gradients", "[autograd]") {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor h = x * 3.0;
  h.retain_grad();
  NDArray seen;
  h.register_hook([&](const NDArray& g) {
    seen = g.clone();
    return NDArray();  // keep the gradient unchanged
  });
  Tensor y = sum(h * h);
  y.backward();
  check_close(h.grad().data(), f64({6, 12}, {2}));  // dy/dh = 2h
  check_close(seen, f64({6, 12}, {2}));
  check_close(x.grad().data(), f64({18, 36}, {2}));
  // A hook may replace the gradient (here: zero it, so nothing reaches x).
  Tensor x2 = tensor({1.0}, kFloat64).requires_grad_();
  Tensor h2 = x2 * 2.0;
  h2.register_hook([](const NDArray& g) { return g * 0.0; });
  (h2 * 5.0).backward();
  CHECK(x2.grad().item() == 0.0);
  Tensor leaf = tensor({1.0});
  CHECK_THAT(error_message([&] { leaf.retain_grad(); }), Contains("does not require grad"));
}

TEST_CASE("a custom op with its own backward", "[autograd]") {
  // y = x^3 written as a new op; dy/dx = 3x^2.
  auto cube = [](const Tensor& x) {
    NDArray xv = x.data();
    return make_op("cube", map(xv, [](auto v) { return v * v * v; }), {x},
                   [xv](const NDArray& g) -> Grads {
                     return {map(g, xv, [](auto g, auto x) { return g * 3 * x * x; })};
                   });
  };
  Tensor x = tensor({2.0, -1.0}, kFloat64).requires_grad_();
  Tensor y = cube(x);
  CHECK(y.op() == "cube");
  sum(y).backward();
  check_close(x.grad().data(), f64({12, 3}, {2}));
  auto result = gradcheck([&](const std::vector<Tensor>& in) { return cube(in[0]); }, {x});
  INFO(result.report);
  CHECK(result.ok);
  // A backward returning the wrong shape is caught by the engine.
  auto broken = [](const Tensor& x) {
    return make_op("broken", x.data().clone(), {x},
                   [](const NDArray&) -> Grads { return {NDArray::zeros({7}, kFloat64)}; });
  };
  CHECK_THAT(
      error_message([&] { sum(broken(x)).backward(); }),
      Contains(
          "backward of 'broken' returned a gradient of [7] float64 for input 0 of [2] float64"));
}

TEST_CASE("the graph is freed after backward and when the output goes away", "[autograd]") {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  std::weak_ptr<Node> middle;
  {
    Tensor h = exp(x);
    middle = h.node();
    Tensor y = sum(h * 2.0);
    y.backward();
    // The backward functions (and the arrays they saved) are released...
    CHECK(middle.lock()->graph_freed);
    CHECK_FALSE(static_cast<bool>(middle.lock()->backward));
  }
  // ...and once no tensor refers to the graph, its nodes are destroyed.
  CHECK(middle.expired());
  CHECK(x.grad().defined());
}

TEST_CASE("anomaly detection names the op that produced a NaN gradient", "[autograd]") {
  Tensor x = tensor({0.0, 1.0}, kFloat64).requires_grad_();
  DetectAnomalyGuard guard;
  Tensor y = sum(sqrt(x));  // d sqrt(x)/dx = 1/(2 sqrt x) is infinite at 0
  CHECK_THAT(error_message([&] { y.backward(); }),
             Contains("the backward of 'sqrt' produced a non-finite"));
}

TEST_CASE("the graph exports to DOT with ops, shapes and gradient norms", "[autograd]") {
  Tensor w = tensor({3.0, 4.0}, kFloat64).requires_grad_();
  w.set_name("w");
  Tensor y = sum(w * 2.0);
  {
    DetectAnomalyGuard record_norms;
    y.backward();
  }
  std::string dot = to_dot(y);
  CHECK_THAT(dot, Contains("digraph autograd"));
  CHECK_THAT(dot, Contains("leaf w\\n[2]\\n|grad| = 2.828"));  // |(2, 2)| = 2.828
  CHECK_THAT(dot, Contains("mul\\n[2]\\n|grad| = 1.414"));     // |(1, 1)|
  CHECK_THAT(dot, Contains("sum\\n[]\\n|grad| = 1"));
  CHECK_THAT(dot, Contains("->"));
}

TEST_CASE("tensors print their values and origin", "[autograd]") {
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  CHECK_THAT(fmt::format("{}", w), Contains("requires_grad=true"));
  CHECK_THAT(fmt::format("{}", w * 2.0), Contains("op=mul"));
  CHECK_THAT(fmt::format("{}", w), Contains("shape=[2], dtype=float32"));
}

TEST_CASE("unbind: parts share one gradient buffer, also across retained passes", "[autograd]") {
  Tensor x = Tensor(f64({1, 2, 3, 4, 5, 6}, {2, 3})).requires_grad_();
  std::vector<Tensor> cols = unbind(x, 1);
  REQUIRE(cols.size() == 3);
  check_close(cols[2].data(), f64({3, 6}, {2}));
  Tensor y = sum(cols[0] * 10.0) + sum(cols[2]);  // column 1 unused: its gradient stays 0
  y.backward(BackwardOptions{.retain_graph = true});
  check_close(x.grad().data(), f64({10, 0, 1, 10, 0, 1}, {2, 3}));
  y.backward();  // a second pass adds the same again, from a fresh buffer
  check_close(x.grad().data(), f64({20, 0, 2, 20, 0, 2}, {2, 3}));
}

TEST_CASE("matmul's two gradients have the same bits at one and two threads", "[autograd]") {
  // With two threads, dL/dA and dL/dB are computed side by side.
  Generator gen(4);
  struct Case {
    Shape a, b;
  };
  for (const Case& c : {Case{{40, 48}, {48, 36}}, Case{{3, 20, 48}, {48, 36}},
                        Case{{3, 20, 48}, {3, 48, 36}}, Case{{2, 1, 20, 48}, {3, 48, 36}}}) {
    CAPTURE(c.a, c.b);
    const NDArray a = NDArray::normal(c.a, gen, 0, 1, kFloat32);
    const NDArray b = NDArray::normal(c.b, gen, 0, 1, kFloat32);
    auto run = [&](int threads) {
      ThreadCount count(threads);
      Tensor at = Tensor(a.clone()).requires_grad_(), bt = Tensor(b.clone()).requires_grad_();
      Tensor y = matmul(at, bt);
      sum(y * y).backward();
      return std::vector<NDArray>{at.grad().data(), bt.grad().data()};
    };
    check_same_bits(run(2), run(1));
  }
}
