// conv2d and Conv2d: against a direct nested-loop convolution, float64 gradchecks (eps 1e-6,
// atol 1e-5, rtol 1e-3: gradcheck's defaults), errors, and determinism over threads.
// (Timings are printed by the nn_layers_timing program, timing.cpp, not by a test.)
#include "nn/conv.h"
#include "support.h"
#include "tensor/parallel.h"

using namespace attend;
using namespace attend::testing;

namespace {

// y[b,o,i,j] = bias[o] + sum_{c,u,v} w[o,c,u,v] x[b,c,i*s-p+u, j*s-p+v], straight from the
// definition (float64, positions outside the input count as 0).
NDArray reference_conv2d(const NDArray& x, const NDArray& w, const NDArray& bias, Index s,
                         Index p) {
  const Index B = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const Index O = w.size(0), kh = w.size(2), kw = w.size(3);
  const Index Ho = (H + 2 * p - kh) / s + 1, Wo = (W + 2 * p - kw) / s + 1;
  NDArray y = NDArray::zeros({B, O, Ho, Wo}, kFloat64);
  for (Index b = 0; b < B; ++b)
    for (Index o = 0; o < O; ++o)
      for (Index i = 0; i < Ho; ++i)
        for (Index j = 0; j < Wo; ++j) {
          double total = bias.defined() ? bias.at({o}) : 0.0;
          for (Index c = 0; c < C; ++c)
            for (Index u = 0; u < kh; ++u)
              for (Index v = 0; v < kw; ++v) {
                const Index r = i * s - p + u, q = j * s - p + v;
                if (r >= 0 && r < H && q >= 0 && q < W)
                  total += w.at({o, c, u, v}) * x.at({b, c, r, q});
              }
          y.set({b, o, i, j}, total);
        }
  return y;
}

struct ConvCase {
  Shape x, w;
  Index stride, padding;
  bool bias;
};

bool bitwise_equal(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && a.to_vector() == b.to_vector();
}

}  // namespace

TEST_CASE("conv2d matches the nested-loop definition", "[nn][conv]") {
  const std::vector<ConvCase> cases = {
      {{2, 3, 5, 5}, {4, 3, 3, 3}, 1, 0, true},   // plain 3x3
      {{2, 2, 6, 7}, {3, 2, 3, 3}, 2, 1, true},   // non-square, stride 2, padding 1
      {{1, 3, 4, 6}, {2, 3, 2, 3}, 1, 1, false},  // non-square kernel, no bias
      {{2, 4, 5, 3}, {5, 4, 1, 1}, 1, 0, true},   // 1x1 kernel
      {{3, 1, 7, 5}, {2, 1, 3, 2}, 3, 2, true},   // stride 3, padding 2 (whole padded rows)
      {{1, 2, 2, 2}, {1, 2, 5, 5}, 1, 2, true},   // kernel as large as the padded input
  };
  Generator gen(11);
  for (const ConvCase& c : cases) {
    NDArray x = NDArray::normal(c.x, gen, 0, 1, kFloat64);
    NDArray w = NDArray::normal(c.w, gen, 0, 1, kFloat64);
    NDArray b = c.bias ? NDArray::normal({c.w[0]}, gen, 0, 1, kFloat64) : NDArray();
    INFO("x " << to_string(c.x) << " w " << to_string(c.w) << " stride " << c.stride << " padding "
              << c.padding);
    Tensor y = nn::conv2d(Tensor(x), Tensor(w), c.bias ? Tensor(b) : Tensor(), c.stride, c.padding);
    check_close(y.data(), reference_conv2d(x, w, b, c.stride, c.padding), 1e-12);
  }
}

TEST_CASE("conv2d in float32 agrees with float64", "[nn][conv]") {
  Generator gen(12);
  NDArray x = NDArray::normal({3, 4, 9, 8}, gen, 0, 1, kFloat64);
  NDArray w = NDArray::normal({6, 4, 3, 3}, gen, 0, 1, kFloat64);
  NDArray b = NDArray::normal({6}, gen, 0, 1, kFloat64);
  Tensor y64 = nn::conv2d(Tensor(x), Tensor(w), Tensor(b), 2, 1);
  Tensor y32 =
      nn::conv2d(Tensor(x.to(kFloat32)), Tensor(w.to(kFloat32)), Tensor(b.to(kFloat32)), 2, 1);
  REQUIRE(y32.dtype() == kFloat32);
  check_close(y32.data().to(kFloat64), y64.data(), 1e-4);
}

TEST_CASE("conv2d gradients w.r.t. input, weight and bias", "[nn][conv][gradcheck]") {
  const std::vector<ConvCase> cases = {
      {{2, 2, 5, 4}, {3, 2, 3, 3}, 2, 1, true},   // stride 2, padding 1, non-square input
      {{1, 3, 4, 4}, {2, 3, 2, 3}, 1, 0, true},   // non-square kernel
      {{2, 2, 3, 3}, {2, 2, 1, 1}, 1, 0, false},  // 1x1 kernel, no bias
      {{1, 1, 6, 5}, {2, 1, 3, 3}, 3, 2, true},   // stride 3, padding 2
  };
  std::uint64_t seed = 20;
  for (const ConvCase& c : cases) {
    Generator gen(seed++);
    Tensor x = randn(c.x, gen, kFloat64).requires_grad_();
    Tensor w = randn(c.w, gen, kFloat64).requires_grad_();
    Tensor b = c.bias ? randn({c.w[0]}, gen, kFloat64).requires_grad_() : Tensor();
    std::vector<Tensor> inputs = {x, w};
    if (c.bias) inputs.push_back(b);
    auto f = [&](const std::vector<Tensor>& in) {
      return nn::conv2d(in[0], in[1], c.bias ? in[2] : Tensor(), c.stride, c.padding);
    };
    GradcheckResult r = gradcheck(f, inputs);
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == x.numel() + w.numel() + (c.bias ? b.numel() : 0));
  }
}

TEST_CASE("Conv2d module: gradcheck with stride and padding", "[nn][conv][gradcheck]") {
  Generator gen(30);
  nn::Conv2d conv(2, 3, 3, /*stride=*/2, /*padding=*/1, true, gen);
  conv.to(kFloat64);
  Tensor x = randn({2, 2, 5, 6}, gen, kFloat64).requires_grad_();
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return conv(in[0]); },
                                {x, conv.weight, conv.bias});
  INFO(r.report);
  CHECK(r.ok);
  CHECK(r.ops == std::vector<std::string>{"conv2d"});
}

TEST_CASE("conv2d backward computes only the gradients asked for", "[nn][conv]") {
  Generator gen(31);
  Tensor x = randn({2, 2, 4, 4}, gen, kFloat64);
  Tensor w = randn({3, 2, 3, 3}, gen, kFloat64).requires_grad_();
  Tensor b = randn({3}, gen, kFloat64);
  sum(nn::conv2d(x, w, b, 1, 1)).backward();
  REQUIRE(w.grad().defined());
  CHECK_FALSE(x.grad().defined());
  CHECK_FALSE(b.grad().defined());
  // d sum(y) / d w[o,c,u,v] = sum over b, i, j of x[b, c, i-1+u, j-1+v] (zero outside):
  // the same for every o.
  NDArray g = w.grad().data();
  for (Index c = 0; c < 2; ++c)
    for (Index u = 0; u < 3; ++u)
      for (Index v = 0; v < 3; ++v) {
        double expected = 0;
        for (Index bi = 0; bi < 2; ++bi)
          for (Index i = 0; i < 4; ++i)
            for (Index j = 0; j < 4; ++j) {
              const Index r = i - 1 + u, q = j - 1 + v;
              if (r >= 0 && r < 4 && q >= 0 && q < 4) expected += x.data().at({bi, c, r, q});
            }
        for (Index o = 0; o < 3; ++o)
          CHECK_THAT(g.at({o, c, u, v}), Catch::Matchers::WithinAbs(expected, 1e-12));
      }
}

TEST_CASE("Conv2d: parameters, default init and description", "[nn][conv]") {
  Generator gen(32);
  nn::Conv2d conv(4, 8, 3, 1, 1, true, gen);
  auto named = conv.named_parameters();
  REQUIRE(named.size() == 2);
  CHECK(named[0].first == "weight");
  CHECK(named[0].second.shape() == Shape{8, 4, 3, 3});
  CHECK(named[1].first == "bias");
  CHECK(named[1].second.shape() == Shape{8});
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 4*3*3 = 36: bound 1/6.
  const double bound = 1.0 / 6.0;
  for (const Tensor& p : conv.parameters()) {
    NDArray a = abs(p.data());
    CHECK(max(a).item() <= bound);
    CHECK(max(a).item() > 0.5 * bound);  // spread over the range, not a constant
  }
  CHECK(conv.describe() == "Conv2d(4 -> 8, kernel 3x3, stride 1, padding 1)");
  nn::Conv2d no_bias(1, 2, 5, 2, 0, false, gen);
  CHECK_FALSE(no_bias.bias.defined());
  CHECK(no_bias.parameters().size() == 1);
  CHECK(no_bias.describe() == "Conv2d(1 -> 2, kernel 5x5, stride 2, padding 0, no bias)");
  Tensor y = no_bias(randn({3, 1, 9, 9}, gen));
  CHECK(y.shape() == Shape{3, 2, 3, 3});
}

TEST_CASE("conv2d: clear errors for bad input", "[nn][conv]") {
  Generator gen(33);
  Tensor x = randn({2, 3, 5, 5}, gen), w = randn({4, 3, 3, 3}, gen), b = randn({4}, gen);
  CHECK(error_message([&] {
          nn::conv2d(x, randn({4, 2, 3, 3}, gen), b);
        }) == "conv2d: input [2,3,5,5] has 3 channels but weight [4,2,3,3] expects 2");
  CHECK(error_message([&] {
          nn::conv2d(randn({2, 3, 2, 2}, gen), w, b);
        }) ==
        "conv2d: kernel 3x3 is larger than the padded input 2x2 (input [2,3,2,2], padding 0)");
  CHECK(error_message([&] { nn::conv2d(x, w, b, 0); }) == "conv2d: stride must be positive, got 0");
  CHECK(error_message([&] { nn::conv2d(x, w, b, 1, -1); }) ==
        "conv2d: padding must be non-negative, got -1");
  CHECK(error_message([&] {
          nn::conv2d(randn({3, 5, 5}, gen), w, b);
        }) == "conv2d: input must be [B, C, H, W], got [3,5,5]");
  CHECK(error_message([&] {
          nn::conv2d(x, randn({4, 27}, gen), b);
        }) == "conv2d: weight must be [out_channels, in_channels, kh, kw], got [4,27]");
  CHECK(error_message([&] { nn::conv2d(x, w, randn({3}, gen)); }) ==
        "conv2d: bias [3] does not match weight [4,3,3,3] (expected [4])");
  CHECK(error_message([&] { nn::conv2d(x, Tensor(w.data().to(kFloat64)), b); }) ==
        "conv2d: dtypes float32 and float64 differ (convert one with .to())");
  CHECK(error_message([&] { nn::Conv2d(3, 4, 3, 0); }) == "Conv2d: stride must be positive, got 0");
  CHECK(error_message([&] { nn::Conv2d(3, 0, 3); }) ==
        "Conv2d: channels and kernel size must be positive, got in 3 out 0 kernel 3");
}

TEST_CASE("conv2d is deterministic over runs and threads", "[nn][conv]") {
  Generator gen(40);
  NDArray xv = NDArray::normal({5, 3, 8, 8}, gen), wv = NDArray::normal({6, 3, 3, 3}, gen);
  NDArray bv = NDArray::normal({6}, gen), gv = NDArray::normal({5, 6, 4, 4}, gen);
  struct Run {
    NDArray y, dx, dw, db;
  };
  auto run = [&](int threads) {
    ThreadCount scope(threads);
    Tensor x(xv.clone(), true), w(wv.clone(), true), b(bv.clone(), true);
    Tensor y = nn::conv2d(x, w, b, 2, 1);
    y.backward(gv);
    return Run{y.data(), x.grad().data(), w.grad().data(), b.grad().data()};
  };
  Run first = run(2), second = run(2), single = run(1);
  // Same threads: bitwise identical.
  CHECK(bitwise_equal(first.y, second.y));
  CHECK(bitwise_equal(first.dx, second.dx));
  CHECK(bitwise_equal(first.dw, second.dw));
  CHECK(bitwise_equal(first.db, second.db));
  // 1 vs 2 threads: y and dL/dx are computed per sample the same way (bitwise); dL/dw and
  // dL/db add per-thread partial sums, in another order (float32 rounding, 1e-4 here).
  CHECK(bitwise_equal(first.y, single.y));
  CHECK(bitwise_equal(first.dx, single.dx));
  check_close(first.dw, single.dw, 1e-4);
  check_close(first.db, single.db, 1e-4);
}

// A sample's products of 2^24 multiply-adds or more are split over the threads by gemm
// itself, with the samples one after the other: this must give the same numbers (bitwise:
// gemm's result does not depend on the threads) and must not nest parallel_for.
TEST_CASE("conv2d on large images: gemm's threads, same result", "[nn][conv]") {
  Generator gen(41);
  // 32 * (3*3*3) * (160*160) = 22 million multiply-adds per sample and product, and one sample:
  // fewer samples than threads, so the products themselves are split over the threads.
  NDArray xv = NDArray::normal({1, 3, 160, 160}, gen), wv = NDArray::normal({32, 3, 3, 3}, gen);
  NDArray bv = NDArray::normal({32}, gen), gv = NDArray::normal({1, 32, 160, 160}, gen);
  auto run = [&](int threads) {
    ThreadCount scope(threads);
    Tensor x(xv.clone(), true), w(wv.clone(), true), b(bv.clone(), true);
    Tensor y = nn::conv2d(x, w, b, 1, 1);
    y.backward(gv);
    return std::vector<NDArray>{y.data(), x.grad().data(), w.grad().data(), b.grad().data()};
  };
  std::vector<NDArray> two = run(2), one = run(1);
  for (std::size_t i = 0; i < two.size(); ++i) CHECK(bitwise_equal(two[i], one[i]));
  // And it is the convolution: compare with float64 at a few output channels.
  Tensor y64 =
      nn::conv2d(Tensor(xv.to(kFloat64)), Tensor(wv.to(kFloat64)), Tensor(bv.to(kFloat64)), 1, 1);
  check_close(slice(two[0], 1, 0, 2).to(kFloat64), slice(y64.data(), 1, 0, 2), 1e-4);
}
