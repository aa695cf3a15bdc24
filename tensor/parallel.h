// Splitting work over the CPU's cores.
//
// parallel_for cuts [0, n) into one contiguous chunk per thread. Which indices a thread gets
// depends only on n and the number of threads, never on timing, and every kernel that uses
// it computes each output element entirely inside one chunk, in a fixed order; so results
// are identical from run to run (and, for matmul, for any number of threads).
//
// The number of threads is ATTEND_NUM_THREADS if set, otherwise the number of cores.
#pragma once

#include <functional>

#include "tensor/shape.h"

namespace attend {

int num_threads();
void set_num_threads(int threads);

// Calls body(begin, end) once per chunk, the chunks covering [0, n) in order; chunk sizes
// are multiples of `grain` (except the last). Runs on the calling thread alone when there
// is one thread or too little work for more than one chunk.
void parallel_for(Index n, Index grain, const std::function<void(Index begin, Index end)>& body);

}  // namespace attend
