// Reference solutions of the exercises in docs/04_attention_pooling.md. The tests named
// "exercise check" (tests/lessons/04/test_exercises.cpp) pass with these and with any other
// correct solution.
#include "lesson.h"

namespace attend::lesson04 {

// Exercise 1: the Laplace kernel K(u) = exp(-|u|). Its log, the attention score, is -|u| with
// u = (x - x_i) w. Unlike the Gaussian's, its weights fall off linearly in the log, so far
// points keep more weight, and the kernel has a corner at u = 0.
Tensor laplace_scores(const Tensor& distance, const Tensor& width) {
  return -abs(distance * width);
}

}  // namespace attend::lesson04
