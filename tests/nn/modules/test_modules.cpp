// Module bookkeeping (names, counts, modes, dtype) and the basic layers and losses, with a
// float64 gradcheck of each module (gradcheck's defaults: eps 1e-6, atol 1e-5, rtol 1e-3).
#include <cmath>
#include <limits>

#include "nn/activation.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/sequential.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

struct TwoLayer : nn::Module {
  nn::Linear fc1, fc2;
  TwoLayer(Generator& gen) : fc1(3, 4, true, gen), fc2(4, 2, true, gen) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  Tensor forward(const Tensor& x) { return fc2(tanh(fc1(x))); }
};

struct Encoder : nn::Module {
  TwoLayer block;
  nn::LayerNorm norm;
  Encoder(Generator& gen) : block(gen), norm(2) {
    register_module("block", block);
    register_module("norm", norm);
  }
};

}  // namespace

TEST_CASE("modules name their parameters hierarchically", "[nn]") {
  Generator gen(0);
  Encoder e(gen);
  auto named = e.named_parameters();
  std::vector<std::string> names;
  for (auto& [name, _] : named) names.push_back(name);
  CHECK(names == std::vector<std::string>{"block.fc1.weight", "block.fc1.bias", "block.fc2.weight",
                                          "block.fc2.bias", "norm.weight", "norm.bias"});
  CHECK(e.parameter_count() == 3 * 4 + 4 + 4 * 2 + 2 + 2 + 2);
  for (const Tensor& p : e.parameters()) CHECK(p.requires_grad());
  std::string summary = e.summary();
  CHECK_THAT(summary, Contains("fc1: Linear(3 -> 4)  [16 parameters]"));
  CHECK_THAT(summary, Contains("norm: LayerNorm(2, eps=1e-05)"));
  CHECK_THAT(summary, Contains("total: 30 parameters"));
}

TEST_CASE("train and eval propagate, to() converts every parameter", "[nn]") {
  Generator gen(1);
  nn::Sequential s;
  s.add(std::make_unique<nn::Linear>(2, 2, true, gen));
  auto& drop = s.add(std::make_unique<nn::Dropout>(0.5, gen));
  CHECK(drop.is_training());
  s.eval();
  CHECK_FALSE(drop.is_training());
  s.train();
  CHECK(drop.is_training());
  s.to(kFloat64);
  for (const Tensor& p : s.parameters()) CHECK(p.dtype() == kFloat64);
  CHECK(s.named_parameters()[0].first == "0.weight");
}

TEST_CASE("Linear computes x W^T + b and checks shapes", "[nn]") {
  Generator gen(2);
  nn::Linear fc(3, 2, true, gen);
  fc.to(kFloat64);
  Tensor x = Tensor(f64({1, 2, 3}, {1, 3}));
  NDArray w = fc.weight.data(), b = fc.bias.data();
  NDArray y = fc(x).data();
  for (Index j = 0; j < 2; ++j)
    CHECK_THAT(y.at({0, j}),
               Catch::Matchers::WithinAbs(
                   w.at({j, 0}) + 2 * w.at({j, 1}) + 3 * w.at({j, 2}) + b.at({j}), 1e-12));
  // PyTorch's default initialisation bound 1/sqrt(in).
  for (double v : nn::Linear(100, 50, true, gen).weight.data().to_vector())
    CHECK(std::abs(v) <= 0.1);
  CHECK_THAT(error_message([&] {
               fc(Tensor(f64({1, 2}, {1, 2})));
             }),
             Contains("linear: input [1,2] does not end in in_features 3 of weight [2,3]"));
}

TEST_CASE("Linear's gradients have the same bits at one and two threads", "[nn]") {
  // With two threads, dL/dx and dL/dW (with dL/db) are computed side by side.
  Generator gen(9);
  nn::Linear fc(48, 40, true, gen);
  const NDArray x = NDArray::normal({3, 30, 48}, gen, 0, 1, kFloat32);
  const NDArray g = NDArray::normal({3, 30, 40}, gen, 0, 1, kFloat32);
  auto run = [&](int threads, bool x_needs_grad) {
    ThreadCount count(threads);
    fc.zero_grad();
    Tensor xt = Tensor(x.clone()).requires_grad_(x_needs_grad);
    fc(xt).backward(g);
    std::vector<NDArray> grads{fc.weight.grad().data(), fc.bias.grad().data()};
    if (x_needs_grad) grads.push_back(xt.grad().data());
    return grads;
  };
  for (bool x_needs_grad : {true, false})
    check_same_bits(run(2, x_needs_grad), run(1, x_needs_grad));
}

TEST_CASE("Embedding looks rows up and never updates the padding row", "[nn]") {
  Generator gen(3);
  nn::Embedding emb(5, 3, /*padding_idx=*/0, gen);
  CHECK(sum(abs(slice(emb.weight, 0, 0, 1))).item() == 0.0);
  Tensor ids = Tensor(NDArray::from_list({0, 2, 2, 0}, {2, 2}, kInt64));
  Tensor e = emb(ids);
  CHECK(e.shape() == Shape{2, 2, 3});
  sum(e * e).backward();
  NDArray g = emb.weight.grad().data();
  for (Index d = 0; d < 3; ++d) {
    CHECK(g.at({0, d}) == 0.0);                                   // padding: no gradient
    CHECK(g.at({2, d}) == 2 * 2 * emb.weight.data().at({2, d}));  // used twice, d(x^2) = 2x
  }
  CHECK_THAT(error_message([&] { nn::Embedding(3, 2, 3, gen); }), Contains("padding_idx 3"));
}

TEST_CASE("Dropout keeps the expected value in training and is the identity in eval", "[nn]") {
  Generator gen(4);
  nn::Dropout drop(0.25, gen);
  Tensor x = ones({20000}, kFloat64);
  NDArray y = drop(x).data();
  double kept = 0, total = 0;
  for (double v : y.to_vector()) {
    kept += v != 0;
    total += v;
  }
  CHECK_THAT(kept / 20000, Catch::Matchers::WithinAbs(0.75, 0.01));
  CHECK_THAT(total / 20000, Catch::Matchers::WithinAbs(1.0, 0.015));  // scaled by 1/(1-p)
  drop.eval();
  check_close(drop(x).data(), x.data());
  CHECK_THAT(error_message([&] { nn::Dropout(1.0); }), Contains("p must be in [0, 1)"));
}

TEST_CASE("LayerNorm gives rows of mean 0 and variance 1 before the affine part", "[nn]") {
  Generator gen(5);
  nn::LayerNorm norm(6);
  norm.to(kFloat64);
  Tensor x = randn({4, 6}, gen, kFloat64) * 3.0 + 1.0;
  NDArray y = norm(x).data();
  for (double m : mean(y, 1).to_vector()) CHECK_THAT(m, Catch::Matchers::WithinAbs(0.0, 1e-12));
  for (double v : mean(y * y, 1).to_vector()) CHECK_THAT(v, Catch::Matchers::WithinAbs(1.0, 1e-4));
  CHECK_THAT(error_message([&] {
               norm(randn({2, 5}, gen, kFloat64));
             }),
             Contains("layer_norm: input [2,5] needs gamma and beta of shape [5]"));
}

// layer_norm takes rows in groups whose sums run side by side (nn/layer_norm.cpp): a row's
// numbers must not depend on its group. Each row of a 19-row input (two groups of 8 and three
// rows on their own) against the same row normalised alone: output and input gradient, bit for
// bit; and the same with 1 and 2 threads on an input big enough to be shared out.
TEST_CASE("layer_norm: a row's bits do not depend on the rows around it or the threads", "[nn]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    Generator gen(8);
    const Index rows = 19, d = 37;
    const NDArray x = NDArray::normal({rows, d}, gen, 1, 3, dtype);
    const NDArray g = NDArray::normal({rows, d}, gen, 0, 1, dtype);
    const Tensor gamma = randn({d}, gen, dtype), beta = randn({d}, gen, dtype);
    auto run = [&](const NDArray& input, const NDArray& grad) {
      Tensor xt = Tensor(input.clone()).requires_grad_();
      Tensor y = nn::layer_norm(xt, gamma, beta);
      y.backward(grad);
      return std::pair{y.data(), xt.grad().data()};
    };
    const auto [y, dx] = run(x, g);
    for (Index r = 0; r < rows; ++r) {
      INFO("row " << r);
      const auto [y_row, dx_row] = run(slice(x, 0, r, r + 1), slice(g, 0, r, r + 1));
      CHECK(same_bits(slice(y, 0, r, r + 1), y_row));
      CHECK(same_bits(slice(dx, 0, r, r + 1), dx_row));
    }
  }
  Generator gen(9);
  const NDArray x = NDArray::normal({4100, 64}, gen, 0, 1, kFloat32);  // > 2^18 numbers
  const NDArray g = NDArray::normal({4100, 64}, gen, 0, 1, kFloat32);
  nn::LayerNorm norm(64);
  auto run = [&](int threads) {
    ThreadCount count(threads);
    norm.zero_grad();
    Tensor xt = Tensor(x.clone()).requires_grad_();
    Tensor y = norm(xt);
    y.backward(g);
    return std::vector<NDArray>{y.data(), xt.grad().data(), norm.weight.grad().data(),
                                norm.bias.grad().data()};
  };
  check_same_bits(run(2), run(1));
}

TEST_CASE("cross_entropy matches the definition, with ignored positions and smoothing", "[nn]") {
  NDArray z = f64({1, 2, 3, 0, 0, 0, 2, -1, 0}, {3, 3});
  Tensor logits(z);
  auto lse = [](double a, double b, double c) {
    return std::log(std::exp(a) + std::exp(b) + std::exp(c));
  };
  double l0 = lse(1, 2, 3) - 3, l1 = lse(0, 0, 0) - 0, l2 = lse(2, -1, 0) - 2;
  Tensor t = Tensor(NDArray::from_list({2, 0, 0}, {3}, kInt64));
  CHECK_THAT(nn::cross_entropy(logits, t).item(),
             Catch::Matchers::WithinAbs((l0 + l1 + l2) / 3, 1e-12));
  Tensor ignored = Tensor(NDArray::from_list({2, -100, 0}, {3}, kInt64));
  CHECK_THAT(nn::cross_entropy(logits, ignored).item(),
             Catch::Matchers::WithinAbs((l0 + l2) / 2, 1e-12));
  CHECK_THAT(nn::cross_entropy(logits, t, {.reduction = nn::Reduction::kSum}).item(),
             Catch::Matchers::WithinAbs(l0 + l1 + l2, 1e-12));
  NDArray per = nn::cross_entropy(logits, ignored, {.reduction = nn::Reduction::kNone}).data();
  check_close(per, f64({l0, 0, l2}, {3}), 1e-12);
  // Smoothing 0.3 over 3 classes: target 0.8 on the true class, 0.1 on the others.
  double smooth0 = 0.8 * (lse(1, 2, 3) - 3) + 0.1 * (lse(1, 2, 3) - 1) + 0.1 * (lse(1, 2, 3) - 2);
  Tensor first = slice(logits, 0, 0, 1);
  CHECK_THAT(nn::cross_entropy(first, slice(t, 0, 0, 1), {.label_smoothing = 0.3}).item(),
             Catch::Matchers::WithinAbs(smooth0, 1e-12));
  CHECK_THAT(error_message([&] {
               nn::cross_entropy(logits, Tensor(NDArray::from_list({3, 0, 0}, {3}, kInt64)));
             }),
             Contains("target 3 at position 0 is not a class in 0..2"));
  CHECK_THAT(error_message([&] {
               nn::cross_entropy(logits, Tensor(NDArray::from_list({1, 0}, {2}, kInt64)));
             }),
             Contains("logits [3,3] need targets of shape [3], got [2]"));
}

TEST_CASE("mse and binary cross-entropy losses", "[nn]") {
  Tensor p(f64({1, 2}, {2})), y(f64({0, 4}, {2}));
  CHECK(nn::mse_loss(p, y).item() == (1 + 4) / 2.0);
  Tensor x(f64({0.5, -2}, {2})), t(f64({1, 0}, {2}));
  auto bce = [](double x, double y) {
    double s = 1 / (1 + std::exp(-x));
    return -(y * std::log(s) + (1 - y) * std::log(1 - s));
  };
  CHECK_THAT(nn::binary_cross_entropy_with_logits(x, t).item(),
             Catch::Matchers::WithinAbs((bce(0.5, 1) + bce(-2, 0)) / 2, 1e-12));
  // Stable where the naive formula overflows.
  Tensor big(f64({200}, {1})), one(f64({1}, {1}));
  CHECK(std::isfinite(nn::binary_cross_entropy_with_logits(big * -1.0, one).item()));
}

TEST_CASE("gradcheck: Linear, Embedding, LayerNorm, an MLP in Sequential", "[nn][gradcheck]") {
  Generator gen(6);
  {
    nn::Linear fc(4, 3, true, gen);
    fc.to(kFloat64);
    Tensor x = randn({2, 5, 4}, gen, kFloat64).requires_grad_();
    auto r = gradcheck([&](const std::vector<Tensor>& in) { return fc(in[0]); },
                       with_parameters({x}, fc));
    INFO(r.report);
    CHECK(r.ok);
  }
  {
    nn::Embedding emb(6, 3, nn::kNoPadding, gen);
    emb.to(kFloat64);
    Tensor ids = Tensor(NDArray::from_list({5, 1, 1, 0}, {4}, kInt64));
    auto r =
        gradcheck([&](const std::vector<Tensor>&) { return emb(ids); }, with_parameters({}, emb));
    INFO(r.report);
    CHECK(r.ok);
  }
  {
    nn::LayerNorm norm(5);
    norm.to(kFloat64);
    norm.weight.data() = NDArray::normal({5}, gen, 1, 0.5, kFloat64);  // not all ones
    Tensor x = randn({3, 5}, gen, kFloat64).requires_grad_();
    auto r = gradcheck([&](const std::vector<Tensor>& in) { return norm(in[0]); },
                       with_parameters({x}, norm));
    INFO(r.report);
    CHECK(r.ok);
  }
  {
    nn::Sequential mlp;
    mlp.add(std::make_unique<nn::Linear>(3, 5, true, gen));
    mlp.add(std::make_unique<nn::GELU>());
    mlp.add(std::make_unique<nn::Linear>(5, 4, true, gen));
    mlp.to(kFloat64);
    Tensor x = randn({6, 3}, gen, kFloat64).requires_grad_();
    Tensor targets = Tensor(NDArray::from_list({0, 3, -100, 1, 2, -100}, {6}, kInt64));
    auto r = gradcheck(
        [&](const std::vector<Tensor>& in) { return nn::cross_entropy(mlp(in[0]), targets); },
        with_parameters({x}, mlp));
    INFO(r.report);
    CHECK(r.ok);
  }
}

TEST_CASE("GELU is exact by default, the tanh approximation on request", "[nn]") {
  nn::GELU exact, approx(GeluApproximation::tanh);
  CHECK(exact.describe() == "GELU(approximate='none')");
  CHECK(approx.describe() == "GELU(approximate='tanh')");
  Tensor x = Tensor(f64({1}, {1}), true);  // requires_grad, so that the op is recorded
  CHECK_THAT(exact(x).item(), Catch::Matchers::WithinAbs(0.8413447460685429, 1e-15));
  CHECK_THAT(approx(x).item(), Catch::Matchers::WithinAbs(0.8411919906082768, 1e-15));
  CHECK(approx(x).op() == "gelu_tanh");
}

TEST_CASE("an MLP overfits one batch", "[nn]") {
  Generator gen(7);
  TwoLayer model(gen);
  Tensor x = randn({8, 3}, gen);
  Tensor y = Tensor(NDArray::from_list({0, 1, 1, 0, 1, 0, 0, 1}, {8}, kInt64));
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    model.zero_grad();
    Tensor loss = nn::cross_entropy(model.forward(x), y);
    loss.backward();
    if (step == 0) first = loss.item();
    last = loss.item();
    NoGradGuard no_grad;
    for (Tensor& p : model.parameters()) add_(p.data(), p.grad().data(), -0.5);
  }
  INFO("first loss " << first << ", last loss " << last);
  CHECK(last < 0.05);
  CHECK(last < first / 10);
}

TEST_CASE("cross_entropy of NaN logits is NaN, not inf", "[nn]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor logits(f64({nan, nan, nan, 1, 2, 3}, {2, 3}));
  Tensor t(NDArray::from_list({0, 2}, {2}, kInt64));
  CHECK(std::isnan(nn::cross_entropy(logits, t).item()));
  CHECK(std::isnan(nn::cross_entropy(logits, t, {.label_smoothing = 0.1}).item()));
  NDArray per = nn::cross_entropy(logits, t, {.reduction = nn::Reduction::kNone}).data();
  CHECK(std::isnan(per.to_vector()[0]));
  CHECK(std::isfinite(per.to_vector()[1]));  // the other row is untouched
}
