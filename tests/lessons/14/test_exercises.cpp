// Exercise checks for docs/14_attention_shortcuts.md. Each passes with the reference code in
// interpret/guided_attention.cpp and lessons/14_attention_shortcuts/, and checks what any
// correct answer must say: run `ctest --test-dir build -L lesson14`.
#include <cmath>

#include "lessons/14_attention_shortcuts/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson14;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// T(A) and dT/dA at each value of A, for the mask's sigma and omega.
std::pair<std::vector<double>, std::vector<double>> mask_and_slope(std::vector<double> values,
                                                                   double omega) {
  Tensor a(NDArray::from_vector(values, {1, 1, static_cast<Index>(values.size())}), true);
  const Tensor t = interpret::soft_mask(a, {.sigma = 0.5, .omega = omega});
  sum(t).backward();  // each T depends on its own A only: the gradient is dT/dA elementwise
  return {t.data().to_vector(), a.grad().data().to_vector()};
}

}  // namespace

TEST_CASE("exercise check: the soft mask's values and slopes", "[lesson14]") {
  // omega = 10: T = sigmoid(10 (A - 0.5)) at A = 0, 0.3, 0.5, 0.7, 1.
  const auto [t, slope] = mask_and_slope({0, 0.3, 0.5, 0.7, 1}, 10);
  const std::vector<double> expected = {0.006693, 0.119203, 0.5, 0.880797, 0.993307};
  for (std::size_t i = 0; i < t.size(); ++i) CHECK_THAT(t[i], WithinAbs(expected[i], 1e-6));
  // dT/dA = omega T (1 - T): omega / 4 = 2.5 at the threshold, 1.05 at 0.3 and 0.7.
  CHECK_THAT(slope[2], WithinAbs(2.5, 1e-9));
  CHECK_THAT(slope[1], WithinRel(10 * 0.119203 * 0.880797, 1e-5));
  // A hard threshold is the limit omega -> infinity: at omega = 1000 the slope 0.2 away from
  // the threshold is below 1e-80, so L_am would teach the map nothing.
  const auto [hard, hard_slope] = mask_and_slope({0.3, 0.5, 0.7}, 1000);
  CHECK(hard[0] < 1e-80);
  CHECK(hard_slope[0] < 1e-80);
  CHECK(hard_slope[2] < 1e-80);
  CHECK_THAT(hard_slope[1], WithinAbs(250, 1e-9));
}
