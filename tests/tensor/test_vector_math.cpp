// The float32 exp, tanh, sigmoid and erf of tensor/vector_math.h against double precision.
#include <cmath>

#include "support.h"
#include "tensor/vector_math.h"

using namespace attend;

namespace {
// Distance from the correctly rounded float of `exact`, in units in the last place.
double ulps(float got, double exact) {
  const float rounded = static_cast<float>(exact);
  if (got == rounded) return 0;
  const double ulp = std::abs(static_cast<double>(std::nextafter(rounded, got)) - rounded);
  return std::abs(got - exact) / ulp;
}
}  // namespace

TEST_CASE("vector math: exp, tanh, sigmoid within 3 ulp over the float range", "[tensor]") {
  double worst_exp = 0, worst_tanh = 0, worst_sigmoid = 0;
  // About 60,000 points, denser near 0 where tanh switches formulas.
  for (float x = -87.0f; x < 88.0f; x += std::max(std::abs(x) * 3e-4f, 1e-5f)) {
    worst_exp = std::max(worst_exp, ulps(vector_math::exp(x), std::exp(double{x})));
    worst_tanh = std::max(worst_tanh, ulps(vector_math::tanh(x), std::tanh(double{x})));
    worst_sigmoid =
        std::max(worst_sigmoid, ulps(vector_math::sigmoid(x), 1 / (1 + std::exp(-double{x}))));
  }
  INFO("worst ulp: exp " << worst_exp << ", tanh " << worst_tanh << ", sigmoid " << worst_sigmoid);
  CHECK(worst_exp <= 2);
  CHECK(worst_tanh <= 2);
  CHECK(worst_sigmoid <= 3);
}

TEST_CASE("vector math: erf within 3 ulp", "[tensor]") {
  double worst = 0;
  // Dense near 0 (relative accuracy of tiny values) and over both branches up to where erf
  // rounds to 1.
  for (float x = -6.0f; x < 6.0f; x += std::max(std::abs(x) * 1e-4f, 1e-6f))
    worst = std::max(worst, ulps(vector_math::erf(x), std::erf(double{x})));
  INFO("worst ulp: erf " << worst);
  CHECK(worst <= 3);
  CHECK(vector_math::erf(0.0f) == 0.0f);
  CHECK(vector_math::erf(INFINITY) == 1.0f);
  CHECK(vector_math::erf(-INFINITY) == -1.0f);
  CHECK(std::isnan(vector_math::erf(NAN)));
}

TEST_CASE("vector math: special values", "[tensor]") {
  CHECK(vector_math::exp(-INFINITY) == 0.0f);  // masked attention scores give exactly 0
  CHECK(vector_math::exp(-100.0f) == 0.0f);
  CHECK(std::isinf(vector_math::exp(INFINITY)));
  CHECK(std::isnan(vector_math::exp(NAN)));
  CHECK(std::isnan(vector_math::tanh(NAN)));
  CHECK(vector_math::tanh(INFINITY) == 1.0f);
  CHECK(vector_math::tanh(-INFINITY) == -1.0f);
  CHECK(vector_math::tanh(1e-20f) == 1e-20f);
  CHECK(vector_math::sigmoid(-INFINITY) == 0.0f);
  CHECK(vector_math::sigmoid(INFINITY) == 1.0f);
  CHECK(vector_math::exp(0.0f) == 1.0f);
}

TEST_CASE("float32 softmax keeps exact zeros for masked keys", "[tensor]") {
  NDArray scores = NDArray::from_list({1, -INFINITY, 2, -INFINITY}, {1, 4});
  NDArray w = softmax(scores, 1);
  CHECK(w.at({0, 1}) == 0.0);
  CHECK(w.at({0, 3}) == 0.0);
  CHECK_THAT(w.at({0, 0}) + w.at({0, 2}), Catch::Matchers::WithinAbs(1.0, 1e-6));
}
