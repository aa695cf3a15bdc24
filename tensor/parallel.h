// Splitting work over the CPU's cores.
//
// parallel_for cuts [0, n) into one contiguous chunk per thread. Which indices a thread gets
// depends only on n and the number of threads, never on timing, and every kernel that uses
// it computes each output element entirely inside one chunk, in a fixed order; so results
// are identical from run to run (and, for matmul, for any number of threads).
//
// The number of threads is ATTEND_NUM_THREADS if set (1 to kMaxThreads; anything else is an
// error), otherwise the number of cores.
#pragma once

#include <cstdint>
#include <functional>

#include "tensor/shape.h"

namespace attend {

// The most threads a program may ask for: far more than any machine this course runs on has
// cores (more threads than cores only adds switching), and few enough that starting them
// does not hit a system's limit on threads.
constexpr int kMaxThreads = 256;

int num_threads();
// 1 to kMaxThreads, else an error. If fewer threads can be started, the next parallel loop
// says so on stderr once and runs with those.
void set_num_threads(int threads);

// Calls body(begin, end) once per chunk, the chunks covering [0, n) in order; chunk sizes
// are multiples of `grain` (except the last). Runs on the calling thread alone when there
// is one thread or too little work for more than one chunk.
void parallel_for(Index n, Index grain, const std::function<void(Index begin, Index end)>& body);

// Runs first() and second(), which must not depend on each other: at the same time on two
// threads when there are two and the pool is free, else one after the other on the calling
// thread. For two pieces of work each too small to split, such as the two gradients of a
// small matrix product, or that split badly, such as the trainings of two small models
// (lessons 09 and 10). A parallel loop inside either runs on that piece's thread alone, and
// gives the numbers it gives on the pool: the kernels cut their work by num_threads(), not by
// which threads run the pieces. second() runs with the caller's thread settings (below).
void run_both(const std::function<void()>& first, const std::function<void()>& second);

// Settings that a layer above keeps per thread (autograd's grad mode and anomaly detection:
// a NoGradGuard holds on its own thread only), packed in a word. The layer registers how to
// read them and how to set them; run_both then reads the caller's and sets them on the thread
// that runs second() for as long as it runs, so that a NoGradGuard around run_both holds in
// both pieces. One registration, during static initialisation (autograd/tensor.cpp does it).
// parallel_for does not carry them: its bodies must not depend on them (kernels, or work such
// as writing files, that records no graph).
struct ThreadSettings {
  std::uint64_t (*read)() = nullptr;
  void (*write)(std::uint64_t) = nullptr;
};
void carry_thread_settings(ThreadSettings settings);

// Elementwise loops over this many elements or more are shared out to the threads; below it,
// handing half to another thread costs more than it saves (a ReLU of 2^18 floats takes about
// 0.1 ms; 2^16 was no faster at two threads, bench/README.md "The second thread").
constexpr Index kParallelElements = Index{1} << 18;

// body(begin, end) over [0, n) items (rows of a batch, say) that together take `work` elements'
// worth of work: on the calling thread below kParallelElements, else with parallel_for in
// chunks of a multiple of `grain` items. For kernels that compute each item on its own, so
// that the result never depends on the number of threads.
template <class Body>
void for_each_item_range(Index n, Index work, Index grain, const Body& body) {
  if (work < kParallelElements) {
    body(Index{0}, n);
    return;
  }
  parallel_for(n, grain, [&](Index begin, Index end) { body(begin, end); });
}

// body(begin, end) over [0, n): on the calling thread for small n, else with parallel_for.
// For loops whose every element is computed on its own, so the result never depends on the
// number of threads.
template <class Body>
void for_each_range(Index n, const Body& body) {
  for_each_item_range(n, n, kParallelElements / 4, body);
}

}  // namespace attend
