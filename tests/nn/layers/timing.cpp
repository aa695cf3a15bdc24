// nn_layers_timing: prints how long a forward + backward pass of some layers takes with 1
// and with 2 threads (the best of several runs). A program, not a test: timings depend on
// the machine and its load, so nothing is asserted.
//
//   ./nn_layers_timing            conv2d 32 -> 64, 3x3, padding 1, on [64, 32, 14, 14];
//                                 bidirectional GRU 256 -> 256 on [32, T, 256], T = 10, 50
#include <algorithm>
#include <chrono>
#include <functional>

#include "attend.h"
#include "nn/conv.h"
#include "nn/gru.h"
#include "tensor/parallel.h"

using namespace attend;

namespace {

double best_milliseconds(const std::function<void()>& run, int repeats) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    run();
    std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

}  // namespace

int main() {
  Generator gen(50);
  nn::Conv2d conv(32, 64, 3, 1, 1, true, gen);
  Tensor x = randn({64, 32, 14, 14}, gen).requires_grad_();
  nn::GRU gru(256, 256, /*bidirectional=*/true, gen);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const double conv_ms = best_milliseconds(
        [&] {
          conv.zero_grad();
          x.zero_grad();
          sum(conv(x)).backward();
        },
        7);
    // Three products (y, dL/dW, dL/dx) of 64 x 288 x 196 multiply-adds for each of 64 samples.
    const double gflop = 3.0 * 2 * 64 * 288 * 196 * 64 / 1e9;
    fmt::print(
        "conv2d 32->64 3x3 pad 1 on [64,32,14,14], forward+backward, {} thread(s): "
        "{:.1f} ms ({:.1f} GFLOP/s)\n",
        threads, conv_ms, gflop / (conv_ms / 1e3));
    for (Index steps : {10, 50}) {
      Tensor sequence = randn({32, steps, 256}, gen).requires_grad_();
      const double gru_ms = best_milliseconds(
          [&] {
            gru.zero_grad();
            sum(gru(sequence).output).backward();
          },
          3);
      fmt::print(
          "GRU 256->256 bidirectional on [32,{},256], forward+backward, {} thread(s): "
          "{:.1f} ms\n",
          steps, threads, gru_ms);
    }
  }
}
