// The timing harness shared by the reference-workload benchmarks (bench_ref_*): flags, the
// warm-up and timed steps, and a summary line plus a JSON line shaped like the PyTorch
// scripts' in bench/pytorch/, so that bench/compare_pytorch.sh can put them side by side.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/flags.h"
#include "attend.h"

namespace attend::bench {

// --threads N --steps N --warmup N (app::Flags: --help lists them; a bad value is one line
// naming the flag, exit 2). A workload whose shape can change (batch, lengths) derives its
// own options from these and adds the flags, with the reference shape as their defaults.
struct RefOptions : app::Flags {
  int threads = flag(threads, "threads", 1, "threads of the kernels", app::between(1, kMaxThreads));
  int steps = flag(steps, "steps", 50, "timed training steps", app::at_least(1));
  int warmup = flag(warmup, "warmup", 10, "untimed training steps before them", app::at_least(0));
};

template <class Options = RefOptions>
Options parse_ref_options(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, argc > 0 ? argv[0] : "bench_ref",
          "One reference training workload, timed step by step (bench/README.md).");
  set_num_threads(o.threads);
  return o;
}

// The CPU time of the whole process (every thread), in milliseconds: what a step costs,
// without the time other programs held the core (bench/scaling.sh uses it on busy machines).
inline double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// The shape of a workload's batch, as name=value pairs ({{"batch", 64}, {"length", 32}}):
// printed in the summary line and added to the JSON line.
using Shape = std::vector<std::pair<std::string, Index>>;

// Runs warmup + steps calls of step(i) (each returning the loss) and prints the summary.
inline void run_training_bench(const std::string& name, Index parameters, const RefOptions& o,
                               const std::function<double(int)>& step, const Shape& shape = {}) {
  std::vector<double> times, cpu_times;
  double first_loss = 0, last_loss = 0;
  for (int i = 0; i < o.warmup + o.steps; ++i) {
    const double c0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    const double loss = step(i);
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = process_cpu_ms();
    if (i == o.warmup) first_loss = loss;
    last_loss = loss;
    if (i < o.warmup) continue;
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu_times.push_back(c1 - c0);
  }
  std::string shape_text, shape_json;
  for (const auto& [key, value] : shape) {
    shape_text += " " + key + "=" + std::to_string(value);
    shape_json += ", \"" + key + "\": " + std::to_string(value);
  }
  std::printf(
      "%s attend: threads=%d params=%lld%s step median %.2f ms (p10 %.2f, p90 %.2f; CPU "
      "time %.2f ms) loss %.3f->%.3f\n",
      name.c_str(), o.threads, static_cast<long long>(parameters), shape_text.c_str(),
      percentile(times, 0.5), percentile(times, 0.1), percentile(times, 0.9),
      percentile(cpu_times, 0.5), first_loss, last_loss);
  std::printf(
      "JSON {\"name\": \"%s\", \"engine\": \"attend\", \"threads\": %d, \"params\": %lld, "
      "\"step_ms_median\": %.3f, \"step_cpu_ms_median\": %.3f%s}\n",
      name.c_str(), o.threads, static_cast<long long>(parameters), percentile(times, 0.5),
      percentile(cpu_times, 0.5), shape_json.c_str());
}

}  // namespace attend::bench
