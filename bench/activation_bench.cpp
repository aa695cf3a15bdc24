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
// Before any timing, every activation's float32 value is compared with the same op in float64,
// and its gradient with central differences of the float64 forward (tolerances below); a
// wrong engine is not timed.
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
// float32 against float64: a few ulp of each function, times the size of the values; the
// central differences' own error (about 1e-9 with this step) is far below.
constexpr double kRelativeTolerance = 1e-5, kAbsoluteTolerance = 1e-6;
constexpr double kStep = 1e-6;

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

// x spread evenly over [-kRange, kRange), at the middle of each step, so that no input lies
// within kStep of 0 (relu's kink), and rounded to float32: both precisions see the same x.
// `shift` is added in float64 (the central differences below).
NDArray inputs(attend::DType dtype, double shift = 0) {
  NDArray x = NDArray::zeros({kRows, kColumns}, attend::kFloat64);
  double* p = x.data<double>();
  const double n = static_cast<double>(x.numel());
  for (attend::Index i = 0; i < x.numel(); ++i)
    p[i] = static_cast<float>(kRange * (2 * (static_cast<double>(i) + 0.5) / n - 1)) + shift;
  return x.to(dtype);
}

// The upstream gradient g: a slow wave around 1.
NDArray upstream(attend::DType dtype) {
  NDArray g = NDArray::zeros({kRows, kColumns}, attend::kFloat64);
  double* p = g.data<double>();
  for (attend::Index i = 0; i < g.numel(); ++i)
    p[i] = 1 + 0.5 * std::sin(0.001 * static_cast<double>(i));
  return g.to(dtype);
}

struct ValueAndGradient {
  NDArray value, gradient;  // float64
};

// f and its backward in float32, as timed below.
ValueAndGradient run_float32(const Activation& f) {
  Tensor x(inputs(attend::kFloat32), true);
  Tensor y = f(x);
  y.backward(upstream(attend::kFloat32));
  return {y.data().to(attend::kFloat64), x.grad().data().to(attend::kFloat64)};
}

NDArray forward_float64(const Activation& f, double shift) {
  return f(Tensor(inputs(attend::kFloat64, shift))).data();
}

// What the backward must give, from the forward alone: g (f(x + h) - f(x - h)) / 2h in
// float64, with h = kStep.
NDArray central_differences(const Activation& f) {
  const NDArray up = forward_float64(f, kStep), down = forward_float64(f, -kStep);
  NDArray expected = upstream(attend::kFloat64);
  double* e = expected.data<double>();
  for (attend::Index i = 0; i < expected.numel(); ++i)
    e[i] *= (up.data<double>()[i] - down.data<double>()[i]) / (2 * kStep);
  return expected;
}

void expect_close(const std::string& name, const char* what, const NDArray& got,
                  const NDArray& expected) {
  const double *a = got.data<double>(), *b = expected.data<double>();
  for (attend::Index i = 0; i < got.numel(); ++i) {
    if (std::abs(a[i] - b[i]) <= kRelativeTolerance * std::abs(b[i]) + kAbsoluteTolerance) continue;
    fmt::print(stderr,
               "bench_activations: WRONG RESULT: {}'s {} at element {} is {}; float64 gives {}. "
               "Not timing an engine that is wrong.\n",
               name, what, i, a[i], b[i]);
    std::exit(EXIT_FAILURE);
  }
}

// The two tanh that gelu_tanh's backward loop is timed with: the C library's (a call per
// element, so the loop stays scalar) and the engine's (inline, so the loop vectorises).
const auto libm_tanh = [](auto u) { return std::tanh(u); };
const auto engine_tanh = [](auto u) { return attend::vector_math::tanh(u); };

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

// Each activation's value against the same op in float64 (libm's functions), its gradient
// against central differences of that forward; and both copies of gelu_tanh's backward loop.
void check_all() {
  for (const auto& [name, f] : activations()) {
    const ValueAndGradient single = run_float32(f);
    expect_close(name, "value", single.value, forward_float64(f, 0));
    expect_close(name, "gradient", single.gradient, central_differences(f));
  }
  const NDArray expected = central_differences(activations().back().second);  // gelu_tanh
  const NDArray x = inputs(attend::kFloat32), g = upstream(attend::kFloat32);
  expect_close("gelu_tanh_backward/std_tanh", "gradient",
               gelu_tanh_backward(g, x, libm_tanh).to(attend::kFloat64), expected);
  expect_close("gelu_tanh_backward/vector_math", "gradient",
               gelu_tanh_backward(g, x, engine_tanh).to(attend::kFloat64), expected);
  fmt::print(stderr,
             "bench_activations: float32 values agree with float64, gradients with central "
             "differences\n");
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
  benchmark::RegisterBenchmark(
      "gelu_tanh_backward/std_tanh",
      [](benchmark::State& state) { bench_gelu_tanh_backward(state, libm_tanh); })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark(
      "gelu_tanh_backward/vector_math",
      [](benchmark::State& state) { bench_gelu_tanh_backward(state, engine_tanh); })
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
