// Lesson 02's functions: the neuron's gradients against the hand derivation, gradient
// accumulation, the MLP and its training, gradcheck of both (float64, gradcheck's default
// tolerances: eps 1e-6, atol 1e-5, rtol 1e-3), and the wrong backward that gradcheck catches.
#include <cmath>

#include "lessons/02_autograd/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson02;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using Catch::Matchers::WithinAbs;

namespace {
void check_against_hand(const NeuronValues& values) {
  Neuron nr = build_neuron(values);
  nr.n.retain_grad();
  nr.o.backward();
  NeuronGradients hand = neuron_gradients_by_hand(values);
  CHECK_THAT(nr.n.grad().item(), WithinAbs(hand.n, 1e-14));
  CHECK_THAT(nr.b.grad().item(), WithinAbs(hand.b, 1e-14));
  CHECK_THAT(nr.x1.grad().item(), WithinAbs(hand.x1, 1e-14));
  CHECK_THAT(nr.w1.grad().item(), WithinAbs(hand.w1, 1e-14));
  CHECK_THAT(nr.x2.grad().item(), WithinAbs(hand.x2, 1e-14));
  CHECK_THAT(nr.w2.grad().item(), WithinAbs(hand.w2, 1e-14));
}
}  // namespace

TEST_CASE("the neuron's forward values are micrograd's", "[lesson02]") {
  Neuron nr = build_neuron();
  CHECK(nr.n.dtype() == kFloat64);
  CHECK_THAT(nr.n.item(), WithinAbs(0.8813735870195432, 1e-15));
  CHECK_THAT(nr.o.item(), WithinAbs(1 / std::sqrt(2.0), 1e-15));
  CHECK(nr.o.op() == "tanh");
  CHECK(nr.n.name() == "n");
  CHECK(build_neuron({}, kFloat32).o.dtype() == kFloat32);
}

TEST_CASE("the neuron's gradients: backward() equals the hand derivation", "[lesson02]") {
  // The numbers the program prints and the chapter derives.
  NeuronGradients hand = neuron_gradients_by_hand({});
  CHECK_THAT(hand.n, WithinAbs(0.5, 1e-15));
  CHECK_THAT(hand.b, WithinAbs(0.5, 1e-15));
  CHECK_THAT(hand.x1, WithinAbs(-1.5, 1e-15));
  CHECK_THAT(hand.w1, WithinAbs(1.0, 1e-15));
  CHECK_THAT(hand.x2, WithinAbs(0.5, 1e-15));
  CHECK(hand.w2 == 0.0);
  check_against_hand({});
  check_against_hand({.x1 = 0.5, .x2 = -1.5, .w1 = 0.25, .w2 = 2.0, .b = -0.3});
  check_against_hand({.b = 0.0});  // exercise 5: a saturated tanh
  CHECK_THAT(neuron_gradients_by_hand({.b = 0.0}).w1, WithinAbs(4.9153e-5, 1e-8));
  CHECK_THAT(error_message([] { neuron_output({}); }), Contains("needs {x1, x2, w1, w2, b}"));
}

TEST_CASE("only leaves and retain_grad tensors keep their gradient", "[lesson02]") {
  Neuron nr = build_neuron();
  nr.n.retain_grad();
  nr.o.backward();
  CHECK(nr.n.grad().defined());
  CHECK_FALSE(nr.x1w1.grad().defined());
  CHECK_FALSE(nr.o.grad().defined());
  CHECK(nr.w1.grad().defined());
}

TEST_CASE("under DetectAnomalyGuard the neuron's drawing shows every gradient", "[lesson02]") {
  Neuron nr = build_neuron();
  {
    DetectAnomalyGuard guard;
    nr.o.backward();
  }
  std::string dot = to_dot(nr.o);
  CHECK_THAT(dot, Contains("tanh o\\n[1]\\n|grad| = 1"));
  CHECK_THAT(dot, Contains("add n\\n[1]\\n|grad| = 0.5"));
  CHECK_THAT(dot, Contains("mul x1*w1\\n[1]\\n|grad| = 0.5"));
  CHECK_THAT(dot, Contains("leaf x1\\n[1]\\n|grad| = 1.5"));  // a norm: |-1.5|
  CHECK_THAT(dot, Contains("leaf w2\\n[1]\\n|grad| = 0"));
  // Without the guard an intermediate node has no gradient to show.
  Neuron plain = build_neuron();
  plain.o.backward();
  CHECK_THAT(to_dot(plain.o), !Contains("add n\\n[1]\\n|grad|"));
}

TEST_CASE("gradients add up: b = a + a, c = b + b gives 4, then zero_grad", "[lesson02]") {
  Accumulation acc = accumulation_demo();
  CHECK(acc.first == 4.0);
  CHECK(acc.second == 8.0);
  CHECK_FALSE(acc.defined_after_zero);
  CHECK(acc.after_zero == 4.0);
}

TEST_CASE("the MLP: shapes, parameters and loss", "[lesson02]") {
  Generator gen(0);
  Mlp mlp = init_mlp(8, gen);
  CHECK(mlp.w1.shape() == Shape{2, 8});
  CHECK(mlp.b1.shape() == Shape{8});
  CHECK(mlp.w2.shape() == Shape{8, 1});
  CHECK(mlp.b2.shape() == Shape{1});
  Index count = 0;
  for (const Tensor& p : mlp.parameters()) {
    CHECK(p.requires_grad());
    count += p.numel();
  }
  CHECK(count == 33);
  Dataset data = xor_dataset();
  CHECK(data.x.shape() == Shape{4, 2});
  CHECK(data.y.shape() == Shape{4, 1});
  CHECK(mlp_forward(mlp, data.x).shape() == Shape{4, 1});
  Tensor p = tensor({1.0, 2.0}, {2, 1}, kFloat64), t = tensor({0.0, 0.0}, {2, 1}, kFloat64);
  CHECK(mse_loss(p, t).item() == 2.5);  // (1 + 4) / 2
  CHECK(mse_loss(p, t).shape() == Shape{});
  CHECK_THAT(error_message([&] { init_mlp(0, gen); }), Contains("at least 1 unit"));
}

TEST_CASE("sgd_step starts each step from zero gradients", "[lesson02]") {
  // After two steps the parameters' .grad must be the gradient at the parameters the second
  // step started from, not the sum of both steps' gradients.
  Generator gen(5);
  Mlp mlp = init_mlp(4, gen, kFloat64);
  Dataset data = xor_dataset(kFloat64);
  sgd_step(mlp, data, 0.1);
  Mlp before;
  before.w1 = Tensor(mlp.w1.data().clone(), true);
  before.b1 = Tensor(mlp.b1.data().clone(), true);
  before.w2 = Tensor(mlp.w2.data().clone(), true);
  before.b2 = Tensor(mlp.b2.data().clone(), true);
  const double loss = sgd_step(mlp, data, 0.1);
  Tensor reference = mse_loss(mlp_forward(before, data.x), data.y);
  reference.backward();
  CHECK_THAT(loss, WithinAbs(reference.item(), 1e-15));
  std::vector<Tensor> got = mlp.parameters(), want = before.parameters();
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("parameter " << i);
    check_close(got[i].grad().data(), want[i].grad().data(), 1e-15);
    // ... and the update was p -= lr * grad.
    check_close(got[i].data(), want[i].data() - 0.1 * want[i].grad().data(), 1e-15);
  }
}

TEST_CASE("training the MLP on XOR makes the loss go down", "[lesson02]") {
  for (std::uint64_t seed : {0, 1, 2}) {
    INFO("seed " << seed);
    Generator gen(seed);
    Mlp mlp = init_mlp(8, gen);
    Dataset data = xor_dataset();
    std::vector<double> losses = train_mlp(mlp, data, 60, 0.2);  // the program's defaults
    REQUIRE(losses.size() == 60);
    const double final_loss = evaluate_loss(mlp, data);
    CHECK(final_loss < losses.front() / 10);
    CHECK(final_loss < 0.05);
    CHECK(losses.back() < losses[losses.size() / 2]);
  }
}

TEST_CASE("too large a learning rate stops training at the first infinite loss, before the update",
          "[lesson02]") {
  Generator gen(0);
  Mlp mlp = init_mlp(8, gen);
  const std::string message = error_message([&] { train_mlp(mlp, xor_dataset(), 60, 0.8); });
  CHECK_THAT(message,
             StartsWith("train_mlp (learning rate 0.8): the loss of step 27 is inf; "
                        "training stopped there (usual causes: a learning rate too large"));
  // The check comes before backward() and the update: the parameters are those after step 26,
  // large but finite, not the inf or NaN that the update with an infinite gradient would leave.
  for (const Tensor& p : mlp.parameters())
    for (double v : p.data().to_vector()) CHECK(std::isfinite(v));
}

TEST_CASE("sigmoid_custom keeps its output as a SavedArray: a change in place stops backward()",
          "[lesson02]") {
  Tensor x = tensor({0.5, -1.0, 2.0}, {3}, kFloat64).requires_grad_();
  Tensor y = sigmoid_custom(x);
  sum(y).backward();  // unchanged: fine
  CHECK_THAT(x.grad().data().to_vector()[1],
             WithinAbs(0.19661193324148185, 1e-15));  // y(1-y) at -1
  Tensor z = sigmoid_custom(x);
  z.data().set({1}, 0.25);  // the output, saved for the backward, changed before backward()
  CHECK_THROWS_WITH(sum(z).backward(),
                    StartsWith("backward of sigmoid_custom: its saved output [3] was modified in "
                               "place after the forward"));
}

TEST_CASE("gradcheck passes on the neuron and the MLP in float64", "[lesson02][gradcheck]") {
  // gradcheck's default tolerances: an element passes when
  // |analytic - numeric| <= atol + rtol * |numeric|, atol 1e-5, rtol 1e-3 (eps 1e-6).
  for (const NeuronValues& values : {NeuronValues{}, NeuronValues{.b = 0.0}}) {
    GradcheckResult r = gradcheck_neuron(values);
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == 5);
  }
  for (std::uint64_t seed : {0, 7}) {
    GradcheckResult r = gradcheck_mlp(8, seed);
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == 33);
    CHECK(r.ops == std::vector<std::string>{"add", "matmul", "mean", "mul", "sub", "tanh"});
  }
}

TEST_CASE("gradcheck refuses float32, and float32 differences are noisy", "[lesson02]") {
  CHECK_THAT(gradcheck_float32_message(),
             Contains("gradcheck: input 0 is float32; finite differences need float64 inputs"));
  // At gradcheck's eps = 1e-6 float32 loses most digits, float64 keeps ten.
  CHECK(central_difference_error(0.5, 1e-6, kFloat32) > 1e-4);
  CHECK(central_difference_error(0.5, 1e-6, kFloat64) < 1e-9);
  // With a large eps both see the same truncation error, about eps^2 / 6 * |tanh'''(x)|.
  CHECK_THAT(central_difference_error(0.5, 1e-1, kFloat32),
             WithinAbs(central_difference_error(0.5, 1e-1, kFloat64), 1e-6));
}

TEST_CASE("the wrong sigmoid backward is caught, the fixed one passes", "[lesson02][gradcheck]") {
  for (std::uint64_t seed : {0, 3}) {
    GradcheckResult wrong = gradcheck_unary(sigmoid_forgetting_one_minus_y, seed);
    CHECK_FALSE(wrong.ok);
    CHECK_THAT(wrong.report, Contains("gradcheck FAILED"));
    CHECK_THAT(wrong.report, Contains("input 0 (shape [2,3]) element [0,0]: analytic"));
    CHECK_THAT(wrong.report, Contains("numeric"));
    CHECK(wrong.ops == std::vector<std::string>{"sigmoid_wrong"});
    GradcheckResult fixed = gradcheck_unary(sigmoid_custom, seed);
    INFO(fixed.report);
    CHECK(fixed.ok);
    CHECK(fixed.ops == std::vector<std::string>{"sigmoid_custom"});
  }
  // Both compute the same forward value; only the backward differs.
  Tensor x = tensor({-2.0, 0.0, 3.0}, kFloat64);
  check_close(sigmoid_custom(x).data(), sigmoid(x.data()), 0.0);
  check_close(sigmoid_forgetting_one_minus_y(x).data(), sigmoid(x.data()), 0.0);
}
