// bench_activations: the elementwise activations, forward + backward, in elements per second
// (items_per_second, wall-clock time), on a [1024, 256] float32 tensor (the hidden layer of
// REF-TRANSFORMER's feed-forward block: 32 sequences of 32 tokens, 4 x 64 features).
//
//   activation/NAME/fwd_bwd  y = NAME(x) with a graph, then y.backward(g): the op as a model
//                            runs it (allocation, the forward loop, the backward loop)
//   gelu_tanh_backward/...   the backward loop alone, NDArray in and out, two ways side by
//                            side: `std_tanh` with the C library's tanh (how it was written
//                            until 2026-12-03: a call per element keeps the loop scalar) and
//                            `vector_math` (the engine's tanh, which the compiler vectorises)
//
// Before any timing, every activation's value and gradient in float32 are compared with the
// same op in float64 (tolerances below); a wrong engine is not timed.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "attend.h"
#include "tensor/vector_math.h"

namespace {

using attend::NDArray;
using attend::Tensor;

constexpr attend::Index kRows = 1024, kColumns = 256;
constexpr double kRange = 4;  // inputs spread over [-4, 4): both tails and the middle
// float32 against float64: a few ulp of each function, times the size of the values.
constexpr double kRelativeTolerance = 1e-5, kAbsoluteTolerance = 1e-6;

using Activation = std::function<Tensor(const Tensor&)>;

const std::vector<std::pair<std::string, Activation>>& activations() {
  static const std::vector<std::pair<std::string, Activation>> list = {
      {"relu", [](const Tensor& x) { return attend::relu(x); }},
      {"tanh", [](const Tensor& x) { return attend::tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return attend::sigmoid(x); }},
      {"gelu", [](const Tensor& x) { return attend::gelu(x); }},
      {"gelu_tanh",
       [](const Tensor& x) { return attend::gelu(x, attend::GeluApproximation::tanh); }},
  };
  return list;
}

// x spread evenly over [-kRange, kRange), the upstream gradient g a slow wave around 1.
NDArray inputs(attend::DType dtype) {
  NDArray x = NDArray::zeros({kRows, kColumns}, attend::kFloat64);
  double* p = x.data<double>();
  const double n = static_cast<double>(x.numel());
  for (attend::Index i = 0; i < x.numel(); ++i)
    p[i] = kRange * (2 * static_cast<double>(i) / n - 1);
  return x.to(dtype);
}

NDArray upstream(attend::DType dtype) {
  NDArray g = NDArray::zeros({kRows, kColumns}, attend::kFloat64);
  double* p = g.data<double>();
  for (attend::Index i = 0; i < g.numel(); ++i)
    p[i] = 1 + 0.5 * std::sin(0.001 * static_cast<double>(i));
  return g.to(dtype);
}

struct ValueAndGradient {
  NDArray value, gradient;
};

ValueAndGradient run(const Activation& f, attend::DType dtype) {
  Tensor x(inputs(dtype), true);
  Tensor y = f(x);
  y.backward(upstream(dtype));
  return {y.data().to(attend::kFloat64), x.grad().data().to(attend::kFloat64)};
}

void expect_close(const std::string& name, const char* what, const NDArray& got,
                  const NDArray& expected) {
  const double *a = got.data<double>(), *b = expected.data<double>();
  for (attend::Index i = 0; i < got.numel(); ++i) {
    if (std::abs(a[i] - b[i]) <= kRelativeTolerance * std::abs(b[i]) + kAbsoluteTolerance) continue;
    fmt::print(stderr,
               "bench_activations: WRONG RESULT: {}'s {} at element {} is {} in float32 and {} in "
               "float64. Not timing an engine that is wrong.\n",
               name, what, i, a[i], b[i]);
    std::exit(EXIT_FAILURE);
  }
}

void check_all() {
  for (const auto& [name, f] : activations()) {
    const ValueAndGradient single = run(f, attend::kFloat32), wide = run(f, attend::kFloat64);
    expect_close(name, "value", single.value, wide.value);
    expect_close(name, "gradient", single.gradient, wide.gradient);
  }
  fmt::print(stderr, "bench_activations: float32 values and gradients agree with float64\n");
}

// Elements per second of wall-clock time (items_per_second), whatever the number of threads.
void count_elements(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * kRows * kColumns);
}

void bench_fwd_bwd(benchmark::State& state, const Activation& f) {
  const NDArray x0 = inputs(attend::kFloat32);
  const NDArray g = upstream(attend::kFloat32);
  for (auto _ : state) {
    Tensor x(x0, true);
    Tensor y = f(x);
    y.backward(g);
    benchmark::DoNotOptimize(x.grad().data().raw_data());
  }
  count_elements(state);
}

// dL/dx of gelu(x, approximate="tanh"): g 0.5 (1 + t + x (1 - t^2) c (1 + 3 a x^2)), t = tanh(u).
template <class Tanh>
NDArray gelu_tanh_backward(const NDArray& g, const NDArray& x, Tanh tanh_of) {
  return attend::map(g, x, [tanh_of](auto g, auto x) {
    using T = decltype(x);
    const T c = T(std::numbers::sqrt2 * std::numbers::inv_sqrtpi), a = T(0.044715);
    const T t = tanh_of(c * (x + a * x * x * x));
    return g * T(0.5) * (1 + t + x * (1 - t * t) * c * (1 + 3 * a * x * x));
  });
}

template <class Tanh>
void bench_gelu_tanh_backward(benchmark::State& state, Tanh tanh_of) {
  const NDArray x = inputs(attend::kFloat32), g = upstream(attend::kFloat32);
  for (auto _ : state) benchmark::DoNotOptimize(gelu_tanh_backward(g, x, tanh_of).raw_data());
  count_elements(state);
}

void register_benchmarks() {
  for (const auto& [name, f] : activations())
    benchmark::RegisterBenchmark(("activation/" + name + "/fwd_bwd").c_str(), bench_fwd_bwd, f)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  benchmark::RegisterBenchmark("gelu_tanh_backward/std_tanh",
                               [](benchmark::State& state) {
                                 bench_gelu_tanh_backward(state,
                                                          [](auto u) { return std::tanh(u); });
                               })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("gelu_tanh_backward/vector_math",
                               [](benchmark::State& state) {
                                 bench_gelu_tanh_backward(
                                     state, [](auto u) { return attend::vector_math::tanh(u); });
                               })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  return attend::app::run_program([] {
    benchmark::AddCustomContext("shape", fmt::format("{}x{} float32", kRows, kColumns));
    check_all();
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
