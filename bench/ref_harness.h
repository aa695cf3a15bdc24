// The timing harness shared by the reference-workload benchmarks (bench_ref_*): flags, the
// warm-up and timed steps, and a summary line plus a JSON line shaped like the PyTorch
// scripts' in bench/pytorch/, so that bench/compare_pytorch.sh can put them side by side.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::bench {

struct RefOptions {
  int threads = 1, steps = 50, warmup = 10;
};

// --threads N --steps N --warmup N; anything else prints the usage and exits 2.
inline RefOptions parse_ref_options(int argc, char** argv) {
  RefOptions o;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = i + 1 < argc ? std::atoi(argv[i + 1]) : 0;
    if (flag == "--threads" && value > 0 && value <= kMaxThreads)
      o.threads = value;
    else if (flag == "--steps" && value > 0)
      o.steps = value;
    else if (flag == "--warmup" && value >= 0)
      o.warmup = value;
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--steps N] [--warmup N]\n", argv[0]);
      std::exit(2);
    }
  }
  set_num_threads(o.threads);
  return o;
}

inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// Runs warmup + steps calls of step(i) (each returning the loss) and prints the summary.
inline void run_training_bench(const std::string& name, Index parameters, const RefOptions& o,
                               const std::function<double(int)>& step) {
  std::vector<double> times;
  double first_loss = 0, last_loss = 0;
  for (int i = 0; i < o.warmup + o.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double loss = step(i);
    const auto t1 = std::chrono::steady_clock::now();
    if (i == o.warmup) first_loss = loss;
    last_loss = loss;
    if (i >= o.warmup) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::printf(
      "%s attend: threads=%d params=%lld step median %.2f ms (p10 %.2f, p90 %.2f) loss "
      "%.3f->%.3f\n",
      name.c_str(), o.threads, static_cast<long long>(parameters), percentile(times, 0.5),
      percentile(times, 0.1), percentile(times, 0.9), first_loss, last_loss);
  std::printf(
      "JSON {\"name\": \"%s\", \"engine\": \"attend\", \"threads\": %d, \"params\": %lld, "
      "\"step_ms_median\": %.3f}\n",
      name.c_str(), o.threads, static_cast<long long>(parameters), percentile(times, 0.5));
}

}  // namespace attend::bench
