// bench_tiny_ops: the fixed cost of one autograd op, in microseconds per op.
//
// On a one-element float32 tensor the arithmetic of an op is nothing, so what is measured is
// everything around it: allocating the result, recording the graph node and its backward
// function, and in backward() sorting the graph and calling that function. A model with small
// layers (a GRU step on a batch of 64, say) runs thousands of such ops per training step.
//
// Each benchmark builds a chain of kChainLength ops starting from a leaf x that requires a
// gradient, then calls sum(y).backward(), then drops the graph, and reports per op:
//   fwd_us/op    building the chain (forward, recording the graph)
//   bwd_us/op    sum(y).backward()
//   free_us/op   releasing the 10,000 graph nodes when the last handle goes
//   us/op        all three: the cost of one op in a training step
// Two chains, so that the number is not an artefact of one op:
//   mul            y = y * c
//   add_mul_tanh   y = y + b, y = y * c, y = tanh(y), repeated
// and, for reference, the same chains with no gradient wanted (no graph recorded).
//
// Target (the issue): forward + backward <= 2 us per tiny op. PyTorch takes about 1.5 us
// per op for the forward alone with requires_grad. See bench/README.md.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>

#include "attend.h"

namespace {

using attend::NDArray;
using attend::Tensor;

constexpr int kChainLength = 10'000;
// The constants of the chains. c^kChainLength = 1.0001^10000 is about e: the mul chain
// neither overflows nor underflows, and its gradient (also c^kChainLength) is a real number.
constexpr double kStart = 0.5;
constexpr double kScale = 1.0001;  // c
constexpr double kShift = 0.1;     // b
// The check compares float32 chains with float64 arithmetic; each op rounds by about 6e-8.
constexpr int kShortChainLength = 30;  // long enough for every op, short enough that the
                                       // tanh chain's gradient has not vanished
constexpr double kRelativeTolerance = 2e-3;

enum class Mix { mul, add_mul_tanh };

const char* mix_name(Mix mix) {
  return mix == Mix::mul ? "mul" : "add_mul_tanh";
}

Tensor scalar_tensor(double value) {
  return Tensor(NDArray::full({1}, value));
}

// Op number i of a chain.
Tensor chain_step(const Tensor& y, int i, Mix mix, const Tensor& c, const Tensor& b) {
  if (mix == Mix::mul) return y * c;
  switch (i % 3) {
    case 0:
      return y + b;
    case 1:
      return y * c;
    default:
      return attend::tanh(y);
  }
}

Tensor build_chain(const Tensor& x, Mix mix, int length, const Tensor& c, const Tensor& b) {
  Tensor y = x;
  for (int i = 0; i < length; ++i) y = chain_step(y, i, mix, c, b);
  return y;
}

// ---- the check --------------------------------------------------------------------------

// The chain's value and its derivative with respect to x, in float64, by hand.
struct ValueAndDerivative {
  double value, derivative;
};

ValueAndDerivative reference_chain(Mix mix, int length) {
  double y = kStart, dy_dx = 1;
  for (int i = 0; i < length; ++i) {
    const int op = mix == Mix::mul ? 1 : i % 3;
    if (op == 0) {
      y += kShift;
    } else if (op == 1) {
      y *= kScale;
      dy_dx *= kScale;
    } else {
      y = std::tanh(y);
      dy_dx *= 1 - y * y;
    }
  }
  return {y, dy_dx};
}

void expect_close(Mix mix, int length, const char* what, double got, double expected) {
  if (!(std::abs(got - expected) <= kRelativeTolerance * std::abs(expected) + 1e-12)) {
    fmt::print(stderr,
               "bench_tiny_ops: WRONG RESULT: the {} chain of {} ops gives {} = {}, but float64 "
               "arithmetic gives {}. Not timing an engine that is wrong.\n",
               mix_name(mix), length, what, got, expected);
    std::exit(EXIT_FAILURE);
  }
}

void check_chain(Mix mix, int length) {
  Tensor x = scalar_tensor(kStart);
  x.requires_grad_();
  const Tensor y = build_chain(x, mix, length, scalar_tensor(kScale), scalar_tensor(kShift));
  attend::sum(y).backward();
  const ValueAndDerivative expected = reference_chain(mix, length);
  expect_close(mix, length, "y", y.item(), expected.value);
  expect_close(mix, length, "dy/dx", x.grad().item(), expected.derivative);
}

void check_all_chains() {
  for (Mix mix : {Mix::mul, Mix::add_mul_tanh})
    for (int length : {kShortChainLength, kChainLength}) check_chain(mix, length);
  fmt::print(stderr, "bench_tiny_ops: values and gradients of the chains agree with float64\n");
}

// ---- the benchmarks ---------------------------------------------------------------------

// The CPU time of this thread, in seconds. Unlike a wall clock it does not count the time
// during which other programs on a shared machine have the core.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Microseconds per op, averaged over the iterations by Google Benchmark.
benchmark::Counter per_op(double total_seconds) {
  return benchmark::Counter(total_seconds * 1e6 / kChainLength, benchmark::Counter::kAvgIterations);
}

// Forward, backward and freeing, each timed with its own clock readings (manual time).
void bench_with_grad(benchmark::State& state, Mix mix) {
  const Tensor c = scalar_tensor(kScale), b = scalar_tensor(kShift);
  Tensor x = scalar_tensor(kStart);
  x.requires_grad_();
  double forward = 0, backward = 0, release = 0;
  for (auto _ : state) {
    const double t0 = thread_seconds();
    Tensor y = build_chain(x, mix, kChainLength, c, b);
    const double t1 = thread_seconds();
    attend::sum(y).backward();
    const double t2 = thread_seconds();
    y = Tensor();  // the last handle to the graph: its nodes are freed here
    const double t3 = thread_seconds();
    forward += t1 - t0;
    backward += t2 - t1;
    release += t3 - t2;
    state.SetIterationTime(t3 - t0);
    x.zero_grad();
  }
  state.counters["fwd_us/op"] = per_op(forward);
  state.counters["bwd_us/op"] = per_op(backward);
  state.counters["free_us/op"] = per_op(release);
  state.counters["us/op"] = per_op(forward + backward + release);
}

// The same chain with no leaf requiring a gradient: no graph is recorded, so this is the
// cost of the op's own work (allocation and one float) without the autograd bookkeeping.
void bench_no_grad(benchmark::State& state, Mix mix) {
  const Tensor c = scalar_tensor(kScale), b = scalar_tensor(kShift);
  const Tensor x = scalar_tensor(kStart);
  double forward = 0;
  for (auto _ : state) {
    const double t0 = thread_seconds();
    Tensor y = build_chain(x, mix, kChainLength, c, b);
    benchmark::DoNotOptimize(y.data().raw_data());
    const double t1 = thread_seconds();
    forward += t1 - t0;
    state.SetIterationTime(t1 - t0);
  }
  state.counters["fwd_us/op"] = per_op(forward);
  state.counters["us/op"] = per_op(forward);
}

void register_benchmarks() {
  for (Mix mix : {Mix::mul, Mix::add_mul_tanh}) {
    const std::string prefix = fmt::format("tiny_ops/{}/", mix_name(mix));
    benchmark::RegisterBenchmark((prefix + "fwd_bwd").c_str(), bench_with_grad, mix)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((prefix + "no_grad").c_str(), bench_no_grad, mix)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Inside run_program: an exception (an attend::Error, or Google Benchmark's own on a flag
  // such as --benchmark_repetitions=-5) is one line and exit 1, not an abort.
  return attend::app::run_program([] {
    benchmark::AddCustomContext("chain_length", std::to_string(kChainLength));
    check_all_chains();
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
