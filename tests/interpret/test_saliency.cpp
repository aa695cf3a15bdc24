// interpret/saliency.h: gradient and input x gradient maps by hand, on images [B, C, H, W]
// and tokens [B, T, E], and the errors.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;

TEST_CASE("gradient saliency: max over the channels of |g|", "[interpret]") {
  // One image, 2 channels of 1 x 3 pixels: g_0 = (1, -3, 0), g_1 = (-2, 2, 0.5).
  // max(|1|, |-2|) = 2, max(|-3|, |2|) = 3, max(0, 0.5) = 0.5.
  NDArray g = f64({1, -3, 0, -2, 2, 0.5}, {1, 2, 1, 3});
  check_close(gradient_saliency(g), f64({2, 3, 0.5}, {1, 1, 3}));
}

TEST_CASE("input x gradient: sum over the channels of x * g, the sign kept", "[interpret]") {
  // x_0 = (1, 2, 3), x_1 = (4, -1, 2); g as above:
  // pixel 0: 1 * 1 + 4 * (-2) = -7; pixel 1: 2 * (-3) + (-1) * 2 = -8; pixel 2: 0 + 2 * 0.5 = 1.
  NDArray x = f64({1, 2, 3, 4, -1, 2}, {1, 2, 1, 3});
  NDArray g = f64({1, -3, 0, -2, 2, 0.5}, {1, 2, 1, 3});
  check_close(input_x_gradient(x, g), f64({-7, -8, 1}, {1, 1, 3}));
}

TEST_CASE("saliency over tokens: the embedding axis is the channel axis (-1)", "[interpret]") {
  // Two tokens of 3 features: x = [(1, 0, 2), (1, 1, 1)], g = [(3, 5, -1), (-1, 2, 0)].
  NDArray x = f64({1, 0, 2, 1, 1, 1}, {1, 2, 3});
  NDArray g = f64({3, 5, -1, -1, 2, 0}, {1, 2, 3});
  check_close(gradient_saliency(g, -1), f64({5, 2}, {1, 2}));
  check_close(input_x_gradient(x, g, -1), f64({1, 1}, {1, 2}));  // 3 + 0 - 2, -1 + 2 + 0
  // The same arrays reduced over axis 1 instead (the tokens): a different map, [1, 3].
  check_close(gradient_saliency(g, 1), f64({3, 5, 1}, {1, 3}));
}

TEST_CASE("saliency: errors name the function and the shapes", "[interpret]") {
  CHECK_THAT(error_message([] {
               input_x_gradient(NDArray::zeros({1, 2, 4, 4}), NDArray::zeros({1, 3, 4, 4}));
             }),
             Contains("input_x_gradient: inputs [1,2,4,4] and gradients [1,3,4,4]"));
  CHECK_THAT(error_message([] {
               gradient_saliency(NDArray::zeros({4, 4}), 2);
             }),
             Contains("gradient_saliency: channel axis 2 does not fit an array of shape [4,4]"));
  CHECK_THAT(error_message([] { gradient_saliency(NDArray::zeros({4}), 0); }),
             Contains("shape [4] (at least 2 axes)"));
}
