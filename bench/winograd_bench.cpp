// bench_winograd: would Winograd's convolution pay on the course's 3x3 layers? An experiment
// for issue 14, forward pass only; nothing in the library uses it.
//
// attend's conv2d computes a 3x3 convolution as im2col + GEMM: 9 C multiply-adds per output
// and channel. Winograd's F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016) computes a 2x2 block of outputs from a 4x4 block d of the input:
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A                                      (their eq. 8)
// The 16 elementwise products, summed over the input channels, are 16 matrix products
// M_k [O, P] = U_k [O, C] @ V_k [C, P], with U_k = (G g G^T)_k for every (o, c) and
// V_k = (B^T d B)_k for every (c, tile): 16 C multiply-adds per 4 outputs, 4 C per output
// instead of 9 (2.25 times fewer), plus the transforms, which are additions.
//
// Benchmarks (float32, padding 1, stride 1, the shapes of REF-SAT at batch 32 and of lesson
// 09's pre-training at batch 8):
//   conv/<layer>/b<batch>/im2col     attend::nn::conv2d with no graph (what the lessons run)
//   conv/<layer>/b<batch>/winograd   the code below: filter transform, then per block of tiles
//                                    the input transform, 16 gemm calls, the output transform
// Before timing, both are compared with a float64 direct convolution on kCheckBatch images;
// the largest error of each, relative to the largest output, is printed. Compare them at one
// thread (ATTEND_NUM_THREADS=1): at two, gemm shares out the 16 products (from 2^18
// multiply-adds), but the transforms here stay on one thread, while conv2d splits everything.
// The sizes must be even (2x2 output tiles); the course's are.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "attend.h"
#include "tensor/gemm.h"

namespace {

using attend::Index;
using attend::NDArray;
using attend::Tensor;

struct Layer {
  const char* name;
  Index channels, out_channels, size;  // input [B, C, size, size], output [B, O, size, size]
};

// REF-SAT's encoder (and lesson 09's): 3 -> 32 at 64x64, 32 -> 64 at 32x32, 64 -> 64 at 16x16.
constexpr Layer kLayers[] = {{"conv1", 3, 32, 64}, {"conv2", 32, 64, 32}, {"conv3", 64, 64, 16}};
constexpr Index kBatches[] = {32, 8};
// 5 images: conv3's blocks of 256 tiles then span several images, as in the timed runs.
constexpr Index kCheckBatch = 5;
// float32 rounding of sums of a few hundred products stays under 1e-6 of the largest output
// (printed); the tolerance leaves a margin of a hundred.
constexpr double kTolerance = 1e-4;
constexpr Index kTilesPerBlock = 256;  // tiles transformed and multiplied together (V, M in L2)

// ---- Winograd F(2x2, 3x3) ----------------------------------------------------------------

// U_k [O, C] for k = 4 xi + nu: (G g G^T)[xi][nu] of every 3x3 filter g, with
// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
std::vector<float> transform_filters(const float* w, Index out_channels, Index channels) {
  std::vector<float> u(16 * out_channels * channels);
  const float kG[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
  for (Index o = 0; o < out_channels; ++o)
    for (Index c = 0; c < channels; ++c) {
      const float* g = w + (o * channels + c) * 9;
      float gg[4][3];  // G g
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
          gg[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)  // (G g) G^T: G^T's column j is G's row j
          u[((4 * i + j) * out_channels + o) * channels + c] =
              gg[i][0] * kG[j][0] + gg[i][1] * kG[j][1] + gg[i][2] * kG[j][2];
    }
  return u;
}

// The tiles are numbered image by image, row of tiles by row of tiles; a block of tiles is a
// whole number of rows of tiles, and both transforms below work a row of tiles at a time, with
// the tiles' index innermost, so that their loops vectorise.
Index tiles_per_block(Index size) {
  const Index tiles_per_row = size / 2;
  return std::max<Index>(1, kTilesPerBlock / tiles_per_row) * tiles_per_row;
}

// V_k [C, count] for the tiles first .. first + count: B^T d B of each tile's 4x4 input block
// d (zeros outside the image), with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
void transform_inputs(const float* x, Index channels, Index size, Index first, Index count,
                      float* v) {
  const Index tiles_per_row = size / 2, rows_per_image = size / 2;
  const Index k_stride = channels * count;
  std::vector<float> padded(4 * (size + 2)), e(4 * (size + 2));
  for (Index c = 0; c < channels; ++c)
    for (Index p0 = 0; p0 < count; p0 += tiles_per_row) {
      const Index tile_row = (first + p0) / tiles_per_row;
      const Index b = tile_row / rows_per_image, top = 2 * (tile_row % rows_per_image) - 1;
      const float* plane = x + (b * channels + c) * size * size;
      // the 4 input rows the tiles read, with a zero column at each end
      for (Index i = 0; i < 4; ++i) {
        float* row = padded.data() + i * (size + 2);
        const Index r = top + i;
        std::fill(row, row + size + 2, 0.0f);
        if (r >= 0 && r < size) std::copy_n(plane + r * size, size, row + 1);
      }
      const Index w = size + 2;
      const float *d0 = padded.data(), *d1 = d0 + w, *d2 = d1 + w, *d3 = d2 + w;
      float *e0 = e.data(), *e1 = e0 + w, *e2 = e1 + w, *e3 = e2 + w;
      // B^T d, every column at once
#pragma omp simd  // the rows do not overlap
      for (Index q = 0; q < w; ++q) {
        e0[q] = d0[q] - d2[q];
        e1[q] = d1[q] + d2[q];
        e2[q] = d2[q] - d1[q];
        e3[q] = d1[q] - d3[q];
      }
      for (Index i = 0; i < 4; ++i) {  // (B^T d) B, tile t's columns 2t .. 2t + 3
        const float* ei = e.data() + i * w;
        float* out = v + (4 * i) * k_stride + c * count + p0;
#pragma omp simd  // the rows do not overlap
        for (Index t = 0; t < tiles_per_row; ++t) {
          out[t] = ei[2 * t] - ei[2 * t + 2];
          out[k_stride + t] = ei[2 * t + 1] + ei[2 * t + 2];
          out[2 * k_stride + t] = ei[2 * t + 2] - ei[2 * t + 1];
          out[3 * k_stride + t] = ei[2 * t + 1] - ei[2 * t + 3];
        }
      }
    }
}

// y's 2x2 block of every tile: A^T m A + bias, with A^T = [1 1 1 0; 0 1 -1 -1].
void transform_outputs(const float* m, const float* bias, Index out_channels, Index size,
                       Index first, Index count, float* y) {
  const Index tiles_per_row = size / 2, rows_per_image = size / 2;
  const Index k_stride = out_channels * count;
  std::vector<float> at(8 * tiles_per_row);
  for (Index o = 0; o < out_channels; ++o)
    for (Index p0 = 0; p0 < count; p0 += tiles_per_row) {
      const float* mo = m + o * count + p0;
      for (Index column = 0; column < 4; ++column) {  // A^T m, column by column of m:
        // row 0 = m0 + m1 + m2, row 1 = m1 - m2 - m3, with m0 .. m3 the column's 4 numbers
        float *a0 = at.data() + column * tiles_per_row, *a1 = a0 + 4 * tiles_per_row;
        const float *m0 = mo + column * k_stride, *m1 = m0 + 4 * k_stride, *m2 = m1 + 4 * k_stride,
                    *m3 = m2 + 4 * k_stride;
#pragma omp simd  // the rows do not overlap
        for (Index t = 0; t < tiles_per_row; ++t) {
          a0[t] = m0[t] + m1[t] + m2[t];
          a1[t] = m1[t] - m2[t] - m3[t];
        }
      }
      const Index tile_row = (first + p0) / tiles_per_row;
      const Index b = tile_row / rows_per_image, top = 2 * (tile_row % rows_per_image);
      for (Index i = 0; i < 2; ++i) {  // row i of (A^T m) A + bias: output columns 2t, 2t + 1
        const float* ai = at.data() + 4 * i * tiles_per_row;
        const float *c0 = ai, *c1 = c0 + tiles_per_row, *c2 = c1 + tiles_per_row,
                    *c3 = c2 + tiles_per_row;
        float* out = y + ((b * out_channels + o) * size + top + i) * size;
#pragma omp simd  // the rows do not overlap
        for (Index t = 0; t < tiles_per_row; ++t) {
          out[2 * t] = c0[t] + c1[t] + c2[t] + bias[o];
          out[2 * t + 1] = c1[t] - c2[t] - c3[t] + bias[o];
        }
      }
    }
}

NDArray winograd_conv(const NDArray& x, const NDArray& w, const NDArray& bias, const Layer& l) {
  const Index batch = x.shape()[0], tiles = batch * (l.size / 2) * (l.size / 2);
  const Index block = tiles_per_block(l.size);
  NDArray y = NDArray::empty({batch, l.out_channels, l.size, l.size});  // every element written
  const std::vector<float> u = transform_filters(w.data<float>(), l.out_channels, l.channels);
  std::vector<float> v(16 * l.channels * block), m(16 * l.out_channels * block);
  for (Index first = 0; first < tiles; first += block) {
    const Index count = std::min(block, tiles - first);
    transform_inputs(x.data<float>(), l.channels, l.size, first, count, v.data());
    for (Index k = 0; k < 16; ++k) {
      attend::GemmShape s;
      s.m = l.out_channels;
      s.k = l.channels;
      s.n = count;
      attend::gemm(s, u.data() + k * l.out_channels * l.channels, l.channels,
                   v.data() + k * l.channels * count, count, m.data() + k * l.out_channels * count,
                   count);
    }
    transform_outputs(m.data(), bias.data<float>(), l.out_channels, l.size, first, count,
                      y.data<float>());
  }
  return y;
}

NDArray im2col_conv(const NDArray& x, const NDArray& w, const NDArray& bias) {
  attend::NoGradGuard no_graph;
  return attend::nn::conv2d(Tensor(x), Tensor(w), Tensor(bias), 1, 1).data();
}

// ---- the check ---------------------------------------------------------------------------

// The direct convolution in float64: y[b, o, i, j] = bias[o] + sum over c, di, dj.
std::vector<double> direct_conv(const NDArray& x, const NDArray& w, const NDArray& bias,
                                const Layer& l) {
  const Index batch = x.shape()[0], n = l.size;
  const float *xs = x.data<float>(), *ws = w.data<float>();
  std::vector<double> y(batch * l.out_channels * n * n);
  for (Index b = 0; b < batch; ++b)
    for (Index o = 0; o < l.out_channels; ++o)
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j) {
          double sum = bias.data<float>()[o];
          for (Index c = 0; c < l.channels; ++c)
            for (Index di = 0; di < 3; ++di)
              for (Index dj = 0; dj < 3; ++dj) {
                const Index r = i + di - 1, col = j + dj - 1;
                if (r < 0 || r >= n || col < 0 || col >= n) continue;
                sum += double{xs[((b * l.channels + c) * n + r) * n + col]} *
                       ws[((o * l.channels + c) * 3 + di) * 3 + dj];
              }
          y[((b * l.out_channels + o) * n + i) * n + j] = sum;
        }
  return y;
}

double relative_error(const NDArray& got, const std::vector<double>& expected) {
  double largest = 0, worst = 0;
  for (Index i = 0; i < got.numel(); ++i) {
    largest = std::max(largest, std::abs(expected[i]));
    worst = std::max(worst, std::abs(got.data<float>()[i] - expected[i]));
  }
  return worst / largest;
}

struct Operands {
  NDArray x, w, bias;
};

Operands operands(const Layer& l, Index batch) {
  attend::Generator gen(0);
  const double fan_in_scale = 1 / std::sqrt(9.0 * static_cast<double>(l.channels));
  return {NDArray::normal({batch, l.channels, l.size, l.size}, gen, 0, 1),
          NDArray::normal({l.out_channels, l.channels, 3, 3}, gen, 0, fan_in_scale),
          NDArray::normal({l.out_channels}, gen, 0, 0.1)};
}

void check_layers() {
  for (const Layer& l : kLayers) {
    const Operands a = operands(l, kCheckBatch);
    const std::vector<double> reference = direct_conv(a.x, a.w, a.bias, l);
    const double e_im2col = relative_error(im2col_conv(a.x, a.w, a.bias), reference);
    const double e_winograd = relative_error(winograd_conv(a.x, a.w, a.bias, l), reference);
    fmt::print(stderr,
               "bench_winograd: {} largest error / largest output: im2col {:.1e}, "
               "winograd {:.1e}\n",
               l.name, e_im2col, e_winograd);
    if (!(e_im2col <= kTolerance && e_winograd <= kTolerance)) {
      fmt::print(stderr, "bench_winograd: WRONG RESULT (tolerance {}): not timing it.\n",
                 kTolerance);
      std::exit(EXIT_FAILURE);
    }
  }
}

// ---- the benchmarks ----------------------------------------------------------------------

void bench_conv(benchmark::State& state, const Layer& l, Index batch, bool winograd) {
  const Operands a = operands(l, batch);
  for (auto _ : state) {
    const NDArray y = winograd ? winograd_conv(a.x, a.w, a.bias, l) : im2col_conv(a.x, a.w, a.bias);
    benchmark::DoNotOptimize(y.raw_data());
  }
  // multiply-adds of the direct convolution, per second: the two columns compare directly
  state.counters["direct_GMAC/s"] =
      benchmark::Counter(1e-9 * static_cast<double>(state.iterations() * batch * l.out_channels *
                                                    l.channels * 9 * l.size * l.size),
                         benchmark::Counter::kIsRate);
}

void register_benchmarks() {
  for (Index batch : kBatches)
    for (const Layer& l : kLayers)
      for (bool winograd : {false, true})
        benchmark::RegisterBenchmark(
            fmt::format("conv/{}/b{}/{}", l.name, batch, winograd ? "winograd" : "im2col").c_str(),
            bench_conv, l, batch, winograd)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  return attend::app::run_program([] {
    check_layers();
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
