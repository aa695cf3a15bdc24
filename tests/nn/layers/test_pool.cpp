// max_pool2d, avg_pool2d, global_avg_pool2d and their modules: against nested-loop
// references, the backward rules (argmax, first on ties; even spread), float64 gradchecks
// (eps 1e-6, atol 1e-5, rtol 1e-3: gradcheck's defaults; max pooling on inputs without
// ties), errors.
#include "nn/pool.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;

namespace {

// The pooled value of every window, straight from the definition (float64).
NDArray reference_pool(const NDArray& x, Index k, Index s, bool take_max) {
  const Index B = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const Index Ho = (H - k) / s + 1, Wo = (W - k) / s + 1;
  NDArray y = NDArray::zeros({B, C, Ho, Wo}, kFloat64);
  for (Index b = 0; b < B; ++b)
    for (Index c = 0; c < C; ++c)
      for (Index i = 0; i < Ho; ++i)
        for (Index j = 0; j < Wo; ++j) {
          double best = -1e300, total = 0;
          for (Index u = 0; u < k; ++u)
            for (Index v = 0; v < k; ++v) {
              const double value = x.at({b, c, i * s + u, j * s + v});
              best = std::max(best, value);
              total += value;
            }
          y.set({b, c, i, j}, take_max ? best : total / static_cast<double>(k * k));
        }
  return y;
}

struct PoolCase {
  Shape x;
  Index kernel, stride;
};

const std::vector<PoolCase> kCases = {
    {{2, 3, 4, 4}, 2, 2},  // windows side by side
    {{1, 2, 5, 7}, 2, 2},  // the 2x2 fast path with a leftover row and column
    {{1, 2, 5, 7}, 3, 2},  // overlapping windows, non-square, a leftover row and column
    {{2, 1, 6, 5}, 2, 3},  // gaps between windows
    {{1, 1, 3, 3}, 3, 1},  // a single window
};

}  // namespace

TEST_CASE("max_pool2d and avg_pool2d match the nested-loop definition", "[nn][pool]") {
  Generator gen(60);
  for (const PoolCase& c : kCases) {
    INFO("x " << to_string(c.x) << " kernel " << c.kernel << " stride " << c.stride);
    NDArray x = NDArray::normal(c.x, gen, 0, 1, kFloat64);
    check_close(nn::max_pool2d(Tensor(x), c.kernel, c.stride).data(),
                reference_pool(x, c.kernel, c.stride, true), 0);
    check_close(nn::avg_pool2d(Tensor(x), c.kernel, c.stride).data(),
                reference_pool(x, c.kernel, c.stride, false), 1e-12);
    // float32 too
    check_close(nn::max_pool2d(Tensor(x.to(kFloat32)), c.kernel, c.stride).data().to(kFloat64),
                reference_pool(x, c.kernel, c.stride, true), 1e-6);
    check_close(nn::avg_pool2d(Tensor(x.to(kFloat32)), c.kernel, c.stride).data().to(kFloat64),
                reference_pool(x, c.kernel, c.stride, false), 1e-6);
  }
  // The stride defaults to the kernel size.
  NDArray x = NDArray::normal({1, 2, 6, 4}, gen, 0, 1, kFloat64);
  CHECK(nn::max_pool2d(Tensor(x), 2).shape() == Shape{1, 2, 3, 2});
  check_close(nn::avg_pool2d(Tensor(x), 2).data(), reference_pool(x, 2, 2, false), 1e-12);
}

TEST_CASE("max_pool2d backward: the gradient goes to the first maximum", "[nn][pool]") {
  // One 2x2 window with a tie between positions (0,1) and (1,0); overlapping windows
  // (kernel 2, stride 1) share the 9 at the centre, which collects from all four.
  Tensor tie(f64({1, 5, 5, 0}, {1, 1, 2, 2}), true);
  nn::max_pool2d(tie, 2).backward(f64({3}, {1, 1, 1, 1}));
  check_close(tie.grad().data(), f64({0, 3, 0, 0}, {1, 1, 2, 2}));

  Tensor x(f64({1, 2, 1, 2, 9, 2, 1, 2, 1}, {1, 1, 3, 3}), true);
  Tensor y = nn::max_pool2d(x, 2, 1);
  check_close(y.data(), f64({9, 9, 9, 9}, {1, 1, 2, 2}));
  y.backward(f64({1, 2, 3, 4}, {1, 1, 2, 2}));
  check_close(x.grad().data(), f64({0, 0, 0, 0, 10, 0, 0, 0, 0}, {1, 1, 3, 3}));
}

// The 2x2 windows of stride 2 keep a byte per output and write every element of dx; the other
// windows scatter into zeros. Both must give the gradient of the first maximum, 0 elsewhere
// (a leftover row and column included), +0 for a gradient of -0 (0 + -0), and follow a NaN.
TEST_CASE("max_pool2d 2x2 backward: every element written, as the scatter into zeros",
          "[nn][pool]") {
  Generator gen(60);
  for (Shape shape : {Shape{2, 3, 5, 7}, Shape{1, 1, 2, 2}, Shape{3, 2, 8, 6}, Shape{1, 2, 7, 5}}) {
    INFO("x " << to_string(shape));
    // Values from a few levels: many ties; one NaN; a gradient with zeros of both signs.
    NDArray xv = NDArray::empty(shape, kFloat32), gv;
    for (float& v : xv.span<float>()) v = static_cast<float>(gen.randint(3));
    xv.span<float>()[1] = std::numeric_limits<float>::quiet_NaN();
    Tensor x(xv, true);
    Tensor y = nn::max_pool2d(x, 2);
    gv = NDArray::normal(y.shape(), gen);
    gv.span<float>()[0] = -0.0f;
    if (gv.numel() > 1) gv.span<float>()[1] = 0.0f;
    y.backward(gv);
    // Expected: 0 + g at the first maximum of each window (the NaN where there is one).
    NDArray expected = NDArray::zeros(shape, kFloat32);
    const Index H = shape[2], W = shape[3], Ho = H / 2, Wo = W / 2;
    for (Index plane = 0; plane < shape[0] * shape[1]; ++plane)
      for (Index i = 0; i < Ho; ++i)
        for (Index j = 0; j < Wo; ++j) {
          const float* xp = xv.data<float>() + plane * H * W;
          Index best = 2 * i * W + 2 * j;
          for (Index at :
               {2 * i * W + 2 * j + 1, (2 * i + 1) * W + 2 * j, (2 * i + 1) * W + 2 * j + 1})
            if (xp[at] > xp[best] || std::isnan(xp[at])) best = at;
          expected.data<float>()[plane * H * W + best] +=
              gv.data<float>()[(plane * Ho + i) * Wo + j];
        }
    const NDArray dx = x.grad().data();
    for (Index i = 0; i < dx.numel(); ++i) {
      INFO("element " << i);
      CHECK(std::signbit(dx.data<float>()[i]) == std::signbit(expected.data<float>()[i]));
      CHECK(dx.data<float>()[i] == expected.data<float>()[i]);
    }
  }
}

TEST_CASE("max_pool2d lets a NaN through", "[nn][pool]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x(f64({1, nan, 3, 2}, {1, 1, 2, 2}));
  CHECK(std::isnan(nn::max_pool2d(x, 2).item()));
}

TEST_CASE("avg_pool2d backward spreads the gradient evenly", "[nn][pool]") {
  Tensor x(NDArray::zeros({1, 1, 3, 4}, kFloat64), true);
  // kernel 2, stride 2: windows at columns 0-1 and 2-3 of rows 0-1; row 2 is left over.
  nn::avg_pool2d(x, 2).backward(f64({4, 8}, {1, 1, 1, 2}));
  check_close(x.grad().data(), f64({1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 0, 0}, {1, 1, 3, 4}));
}

TEST_CASE("pooling gradchecks", "[nn][pool][gradcheck]") {
  std::uint64_t seed = 70;
  for (const PoolCase& c : kCases) {
    Generator gen(seed++);
    // Distinct values a shuffled 0.1 apart: no ties, and no two within a finite-difference step.
    const Index n = c.x.numel();
    std::vector<double> values(static_cast<std::size_t>(n));
    std::vector<Index> order = gen.permutation(n);
    for (Index i = 0; i < n; ++i) values[i] = 0.1 * static_cast<double>(order[i]) - 1.0;
    Tensor x(NDArray::from_vector(std::span<const double>(values), c.x), true);
    INFO("x " << to_string(c.x) << " kernel " << c.kernel << " stride " << c.stride);
    nn::MaxPool2d max_pool(c.kernel, c.stride);
    nn::AvgPool2d avg_pool(c.kernel, c.stride);
    GradcheckResult rm =
        gradcheck([&](const std::vector<Tensor>& in) { return max_pool(in[0]); }, {x});
    INFO(rm.report);
    CHECK(rm.ok);
    GradcheckResult ra =
        gradcheck([&](const std::vector<Tensor>& in) { return avg_pool(in[0]); }, {x});
    INFO(ra.report);
    CHECK(ra.ok);
  }
  Generator gen(79);
  Tensor x = randn({2, 3, 4, 5}, gen, kFloat64).requires_grad_();
  nn::GlobalAvgPool2d gap;
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return gap(in[0]); }, {x});
  INFO(r.report);
  CHECK(r.ok);
}

TEST_CASE("global_avg_pool2d averages each channel", "[nn][pool]") {
  Tensor x(f64({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 2, 2}));
  check_close(nn::global_avg_pool2d(x).data(), f64({2.5, 25}, {1, 2}));
  CHECK(nn::GlobalAvgPool2d().describe() == "GlobalAvgPool2d");
}

TEST_CASE("pooling modules and errors", "[nn][pool]") {
  nn::MaxPool2d max_pool(2);
  nn::AvgPool2d avg_pool(3, 1);
  CHECK(max_pool.stride == 2);
  CHECK(max_pool.describe() == "MaxPool2d(kernel 2x2, stride 2)");
  CHECK(avg_pool.describe() == "AvgPool2d(kernel 3x3, stride 1)");
  CHECK(max_pool.parameters().empty());
  Generator gen(80);
  Tensor x = randn({2, 3, 4, 5}, gen);
  CHECK(
      error_message([&] { nn::max_pool2d(x, 5); }) ==
      "max_pool2d: kernel 5x5 is larger than the input [2,3,4,5] (H 4, W 5; there is no padding)");
  CHECK(error_message([&] { nn::avg_pool2d(x, 2, 0); }) ==
        "avg_pool2d: stride must be positive, got 0");
  CHECK(error_message([&] { nn::avg_pool2d(x, 0); }) ==
        "avg_pool2d: kernel size must be positive, got 0");
  CHECK(error_message([&] {
          nn::max_pool2d(randn({3, 4, 5}, gen), 2);
        }) == "max_pool2d: input must be [B, C, H, W], got [3,4,5]");
  CHECK(error_message([&] {
          nn::max_pool2d(Tensor(NDArray::zeros({1, 1, 2, 2}, kInt64)), 2);
        }) == "max_pool2d: needs a floating-point array (float32 or float64), got int64");
  CHECK(error_message([&] {
          nn::global_avg_pool2d(randn({3, 4}, gen));
        }) == "global_avg_pool2d: input must be [B, C, H, W] with H, W >= 1, got [3,4]");
  CHECK(error_message([&] { nn::MaxPool2d(2, 0); }) ==
        "MaxPool2d: kernel size and stride must be positive, got 2 and 0");
}
