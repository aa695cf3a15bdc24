// interpret/cam.h: CAM and Grad-CAM against maps computed by hand, the counterfactual
// variant, and the upsampling of a grid to pixels. (CAM and Grad-CAM of a trained model, and
// their identity on a GAP + linear head, are tested with lesson 08's classifier.)
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("CAM by hand: M_c(x, y) = sum_k w_k^c f_k(x, y)", "[interpret]") {
  // Two feature maps on a 2x2 grid, two classes.
  NDArray features = f64({1, 2, 3, 4,    // f_0
                          0, 1, 0, -2},  // f_1
                         {1, 2, 2, 2});
  NDArray weight = f64({0.5, 2,  // class 0: w_0 = 0.5, w_1 = 2
                        -1, 3},  // class 1
                       {2, 2});
  check_close(class_activation_maps(features, weight, {0}).reshape({2, 2}),
              f64({0.5, 3, 1.5, -2}, {2, 2}));
  check_close(class_activation_maps(features, weight, {1}).reshape({2, 2}),
              f64({-1, 1, -3, -10}, {2, 2}));
  CHECK_THAT(error_message([&] { class_activation_maps(features, weight, {2}); }),
             Contains("class 2 is outside 0..1"));
  CHECK_THAT(error_message([&] {
               class_activation_maps(features, weight, {0, 1});
             }),
             Contains("1 images but 2 classes"));
}

TEST_CASE("Grad-CAM by hand: alpha = mean gradient, ReLU of the weighted sum", "[interpret]") {
  NDArray features = f64({1, 2, 3, 4, 0, 1, 0, -2}, {1, 2, 2, 2});
  // alpha_0 = mean(1, 1, 1, 1) = 1, alpha_1 = mean(4, 0, 0, -8) = -1
  NDArray gradients = f64({1, 1, 1, 1, 4, 0, 0, -8}, {1, 2, 2, 2});
  // 1*f_0 - 1*f_1 = (1, 1, 3, 6): all positive, ReLU keeps them.
  check_close(grad_cam_from_gradients(features, gradients).reshape({2, 2}),
              f64({1, 1, 3, 6}, {2, 2}));
  // With alpha_0 = -1 (gradients negated on channel 0): -f_0 - f_1 = (-1, -3, -3, -2) -> all 0.
  NDArray flipped = f64({-1, -1, -1, -1, 4, 0, 0, -8}, {1, 2, 2, 2});
  check_close(grad_cam_from_gradients(features, flipped).reshape({2, 2}),
              f64({0, 0, 0, 0}, {2, 2}));
}

TEST_CASE("Grad-CAM: features and gradients must have the same shape [B, K, h, w]", "[interpret]") {
  NDArray features = f64({1, 2, 3, 4}, {1, 1, 2, 2});
  CHECK_THAT(error_message([&] {
               grad_cam_from_gradients(features, f64({1, 2}, {1, 1, 1, 2}));
             }),
             Contains("must both be [B, K, h, w]"));
  CHECK_THAT(error_message([&] {
               class_activation_maps(features, f64({1, 2}, {1, 2}), {0});
             }),
             Contains("do not fit"));
}

TEST_CASE("counterfactual Grad-CAM is Grad-CAM of the negated gradients", "[interpret]") {
  NDArray features = f64({1, 2, 3, 4, 0, 1, 0, -2}, {1, 2, 2, 2});
  NDArray gradients = f64({-1, 0, -1, 0, 0, 0, 0, 0}, {1, 2, 2, 2});
  check_close(counterfactual_grad_cam_from_gradients(features, gradients),
              grad_cam_from_gradients(features, -gradients));
}

TEST_CASE("upsample_map: a grid resized bilinearly to pixels, float64", "[interpret]") {
  NDArray constant = NDArray::full({2, 3}, 0.25, kFloat32);
  NDArray up = upsample_map(constant, 12);
  CHECK(up.shape() == Shape{12, 12});
  CHECK(up.dtype() == kFloat64);
  check_close(up, NDArray::full({12, 12}, 0.25, kFloat64), 1e-7);
  // A single bright cell keeps its maximum in the cell's block of pixels.
  NDArray grid = f64({0, 0, 0, 1}, {2, 2});
  Pixel p = map_maximum(upsample_map(grid, 8));
  CHECK(p.x >= 4);
  CHECK(p.y >= 4);
  CHECK_THAT(error_message([] {
               upsample_map(NDArray::zeros({1, 2, 2}), 4);
             }),
             Contains("expects a grid [h, w]"));
}
