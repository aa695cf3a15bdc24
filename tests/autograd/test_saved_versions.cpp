// Version counters: an array that an op saved for its backward and that is then changed in
// place makes backward() stop with an error naming the op and the array, instead of computing
// a wrong gradient (autograd/saved_array.h).
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("version: every non-const access adds one, a const read none", "[autograd]") {
  NDArray x = f64({1, 2, 3}, {3});
  const std::uint64_t v0 = x.version();
  const NDArray& read = x;
  CHECK(read.data<double>()[0] == 1);
  CHECK(read.span<double>().size() == 3);
  CHECK(read.at({1}) == 2);
  CHECK(x.version() == v0);
  x.data<double>()[0] = 5;
  CHECK(x.version() == v0 + 1);
  for (double& v : x.span<double>()) v += 1;  // one call, three elements: one step
  CHECK(x.version() == v0 + 2);
  x.set({2}, 0);
  CHECK(x.version() == v0 + 3);
  (void)x.raw_data();
  CHECK(x.version() == v0 + 4);
  NDArray view = x.reshape({1, 3});  // shares the memory, so the counter too
  view.data<double>()[0] = 7;
  CHECK(x.version() == v0 + 5);
  NDArray copy = x.clone();  // its own memory
  const std::uint64_t c0 = copy.version();
  copy.data<double>()[0] = 8;
  CHECK(x.version() == v0 + 5);
  CHECK(copy.version() == c0 + 1);
  CHECK(NDArray().version() == 0);
}

TEST_CASE("in place: a changed saved input stops backward (the issue's example)", "[autograd]") {
  // y = sum(w * x): dy/dw = x = [1, 1, 1]. Changing x to 101 after the forward used to give
  // w.grad [101, 101, 101] with no error.
  Tensor x = tensor({1, 1, 1}, kFloat64);
  Tensor w = tensor({2, 2, 2}, kFloat64).requires_grad_();
  Tensor y = sum(w * x);
  for (double& v : x.data().span<double>()) v = 101;
  const std::string message = error_message([&] { y.backward(); });
  CHECK_THAT(message, Contains("backward of mul: its saved input #1 [3] was modified in place"));
  CHECK_THAT(message, Contains("clone it before changing it"));
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("in place: a changed saved output stops backward (exp, sigmoid, tanh)", "[autograd]") {
  for (auto [op, f] : {std::pair<std::string, Tensor (*)(const Tensor&)>{"exp", exp},
                       {"sigmoid", sigmoid},
                       {"tanh", tanh}}) {
    INFO(op);
    Tensor x = tensor({0.5, -1}, kFloat64).requires_grad_();
    Tensor y = f(x);
    y.data().set({0}, 3.0);
    CHECK_THAT(error_message([&] { sum(y).backward(); }),
               Contains("backward of " + op + ": its saved output [2] was modified in place"));
  }
}

TEST_CASE("in place: reads, unsaved arrays and changes after backward are fine", "[autograd]") {
  Tensor x = tensor({1, 2, 3}, kFloat64);
  Tensor w = tensor({2, 2, 2}, kFloat64).requires_grad_();
  Tensor b = tensor({1, 1, 1}, kFloat64).requires_grad_();
  Tensor z = tensor({5, 5, 5}, kFloat64);
  Tensor y = sum(exp(w * x) + b + z);
  // A const read leaves the version alone.
  const NDArray& xv = x.data();
  CHECK(xv.data<double>()[2] == 3);
  // add saves neither input: changing z cannot make a gradient wrong.
  z.data().set({0}, 0.0);
  y.backward();
  check_close(b.grad().data(), f64({1, 1, 1}, {3}));
  check_close(w.grad().data(), f64({std::exp(2.0), 2 * std::exp(4.0), 3 * std::exp(6.0)}, {3}),
              1e-9);
  // After backward the graph is released: an optimizer step may change anything.
  // (A saved array that the backward does not read, such as linear's weight when its input
  // needs no gradient, is not checked either: it cannot make a gradient wrong.)
  w.data().set({0}, 0.0);
  x.data().set({0}, 0.0);
}

TEST_CASE("in place: a saved index and a module's weight", "[autograd]") {
  SECTION("index_select's index") {
    Tensor x = tensor({1, 2, 3}, kFloat64).requires_grad_();
    Tensor index = Tensor(ids({0, 0}, {2}));
    Tensor y = index_select(x, 0, index);
    index.data().set({1}, 2.0);
    CHECK_THAT(error_message([&] { sum(y).backward(); }),
               Contains("backward of index_select: its saved index [2] was modified in place"));
  }
  SECTION("linear's weight, changed by an optimizer step before backward") {
    Generator gen(1);
    nn::Linear layer(3, 2, true, gen);
    Tensor x = randn({4, 3}, gen).requires_grad_();  // dL/dx reads the weight
    Tensor loss = sum(layer.forward(x));
    optim::SGD sgd(layer.parameters(), {.lr = 0.1});
    layer.weight.node()->grad = NDArray::ones(layer.weight.shape());
    layer.bias.node()->grad = NDArray::ones(layer.bias.shape());
    sgd.step();
    CHECK_THAT(error_message([&] { loss.backward(); }),
               Contains("backward of linear: its saved input #1 [2,3] was modified in place"));
  }
}
