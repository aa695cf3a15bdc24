// conv2d in float32 reads its patches in the layouts that need no copy (im2col written in
// gemm's packed layout for the forward product; the weight gradient computed as its
// transpose, nn/conv.cpp). These tests hold it to the bits of the plain computation, written
// out here: im2col into a row-major [K, P] matrix, then y = W @ cols, dW += g @ cols^T,
// dcols = W^T @ g and col2im, each product one gemm call on row-major operands. The shapes
// cover the course's CNN layers, batch 1, channels and positions that are not multiples of the
// tile sizes, strides, paddings, and the products of 1 or 2 rows that gemm treats apart.

#include "nn/conv.h"
#include "support.h"
#include "tensor/gemm.h"
#include "tensor/parallel.h"

using namespace attend;
using namespace attend::testing;

namespace {

struct Case {
  Index batch, channels, height, width, out_channels, kernel, stride, padding;
};

struct Plain {
  NDArray y, dx, dw;
};

// The plain computation, on one thread (one partial sum of dW, samples in order).
Plain plain_conv2d(const NDArray& x, const NDArray& w, const NDArray& bias, const NDArray& g,
                   const Case& c) {
  const Index H = c.height, W = c.width, k = c.kernel;
  const Index Ho = (H + 2 * c.padding - k) / c.stride + 1,
              Wo = (W + 2 * c.padding - k) / c.stride + 1;
  const Index K = c.channels * k * k, P = Ho * Wo, O = c.out_channels;
  Plain r{NDArray::empty({c.batch, O, Ho, Wo}, kFloat32), NDArray::zeros(x.shape(), kFloat32),
          NDArray::zeros(w.shape(), kFloat32)};
  std::vector<float> cols(static_cast<std::size_t>(K * P)), dcols(cols.size());
  // Calls f(row of cols, column, input index or -1 in the padding), rows and columns in order.
  auto patches = [&](Index b, auto f) {
    for (Index ch = 0; ch < c.channels; ++ch)
      for (Index u = 0; u < k; ++u)
        for (Index v = 0; v < k; ++v)
          for (Index oh = 0; oh < Ho; ++oh)
            for (Index ow = 0; ow < Wo; ++ow) {
              const Index i = oh * c.stride - c.padding + u, j = ow * c.stride - c.padding + v;
              const bool inside = i >= 0 && i < H && j >= 0 && j < W;
              f((ch * k + u) * k + v, oh * Wo + ow,
                inside ? ((b * c.channels + ch) * H + i) * W + j : -1);
            }
  };
  const float* xp = x.data<float>();
  for (Index b = 0; b < c.batch; ++b) {
    patches(b, [&](Index row, Index p, Index at) { cols[row * P + p] = at < 0 ? 0.0f : xp[at]; });
    float* yb = r.y.data<float>() + b * O * P;
    for (Index o = 0; o < O; ++o) std::fill(yb + o * P, yb + (o + 1) * P, bias.data<float>()[o]);
    gemm({.m = O, .n = P, .k = K, .accumulate = true}, w.data<float>(), K, cols.data(), P, yb, P);
    const float* gb = g.data<float>() + b * O * P;
    gemm({.m = O, .n = K, .k = P, .transpose_b = true, .accumulate = true}, gb, P, cols.data(), P,
         r.dw.data<float>(), K);
    gemm({.m = K, .n = P, .k = O, .transpose_a = true}, w.data<float>(), K, gb, P, dcols.data(), P);
    float* dxp = r.dx.data<float>();
    patches(b, [&](Index row, Index p, Index at) {
      if (at >= 0) dxp[at] += dcols[row * P + p];
    });
  }
  return r;
}

}  // namespace

TEST_CASE("conv2d float32: the same bits as im2col and plain gemm products", "[nn][conv]") {
  const std::vector<Case> cases = {
      {1, 3, 64, 64, 32, 3, 1, 1},   // the course's first layer (P = 4096, K = 27), batch 1
      {2, 32, 32, 32, 64, 3, 1, 1},  // second layer (K = 288 > 256: two K blocks)
      {2, 64, 16, 16, 64, 3, 1, 1},  // third layer (P = 256)
      {3, 5, 9, 7, 7, 3, 1, 1},      // positions (63) and channels not multiples of the tiles
      {2, 3, 11, 10, 17, 3, 2, 1},   // stride 2, P = 30 < one sliver
      {1, 4, 13, 9, 5, 5, 3, 2},     // 5x5 kernel, stride 3, padding 2
      {2, 6, 12, 12, 40, 1, 1, 0},   // 1x1 kernel
      {2, 9, 20, 20, 2, 3, 1, 0},    // 2 output channels: gemm's path for 2 rows (dW as g cols^T)
      {2, 9, 20, 20, 1, 3, 1, 1},    // 1 output channel
      {2, 1, 30, 30, 8, 1, 1, 0},    // K = 1
      {1, 2, 40, 40, 2, 1, 2, 0},    // K = 2 and O = 2: both sides small
      {1, 32, 24, 25, 16, 3, 1, 1},  // P = 600, K = 288
      {2, 40, 45, 47, 8, 3, 2, 1},   // the same with stride 2 (P = 23 x 24)
      {1, 3, 100, 90, 8, 3, 1, 1},   // P = 9000, K = 27
      {2, 2, 11, 13, 3, 5, 1, 2},    // 5x5, padding 2: two columns and rows of padding each side
      {1, 2, 3, 40, 4, 5, 1, 2},     // fewer input rows than the kernel
      {1, 3, 2, 2, 4, 3, 1, 1},      // a 2x2 input: every patch reaches into the padding
  };
  ThreadCount one(1);
  Generator gen(50);
  for (const Case& c : cases) {
    INFO("batch " << c.batch << " channels " << c.channels << " " << c.height << "x" << c.width
                  << " out " << c.out_channels << " kernel " << c.kernel << " stride " << c.stride
                  << " padding " << c.padding);
    NDArray x = NDArray::normal({c.batch, c.channels, c.height, c.width}, gen);
    NDArray w = NDArray::normal({c.out_channels, c.channels, c.kernel, c.kernel}, gen);
    NDArray bias = NDArray::normal({c.out_channels}, gen);
    Tensor xt(x.clone(), true), wt(w.clone(), true), bt(bias.clone(), true);
    Tensor y = nn::conv2d(xt, wt, bt, c.stride, c.padding);
    NDArray g = NDArray::normal(y.shape(), gen);
    y.backward(g);
    const Plain plain = plain_conv2d(x, w, bias, g, c);
    CHECK(same_bits(y.data(), plain.y));
    CHECK(same_bits(xt.grad().data(), plain.dx));
    CHECK(same_bits(wt.grad().data(), plain.dw));
  }
}
