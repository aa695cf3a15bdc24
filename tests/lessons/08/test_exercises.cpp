// Exercise checks for docs/08_cnn_cam.md. Each passes with the reference solution in
// lessons/08_cnn_cam/ and interpret/cam.cpp (counterfactual Grad-CAM) and checks what any correct
// solution must do: put your own code in the reference function's place and run `ctest --test-dir
// build -L lesson08`.
#include "lessons/08_cnn_cam/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson08;
using namespace attend::interpret;

TEST_CASE("exercise check: counterfactual Grad-CAM by hand", "[lesson08]") {
  NDArray features = f64({1, 2, 3, 4, 0, 1, 0, -2}, {1, 2, 2, 2});
  // alpha = (1, -1) as in the Grad-CAM test; negated (-1, 1): -f_0 + f_1 = (-1, -1, -3, -6).
  NDArray gradients = f64({1, 1, 1, 1, 4, 0, 0, -8}, {1, 2, 2, 2});
  check_close(counterfactual_grad_cam_from_gradients(features, gradients),
              f64({0, 0, 0, 0}, {1, 2, 2}));
  // alpha = (-1/2, 0): 0.5 f_0 = (0.5, 1, 1.5, 2).
  NDArray against = f64({-1, 0, -1, 0, 0, 0, 0, 0}, {1, 2, 2, 2});
  check_close(counterfactual_grad_cam_from_gradients(features, against),
              f64({0.5, 1, 1.5, 2}, {1, 2, 2}));
}

TEST_CASE("exercise check: counterfactual Grad-CAM on the last grid is ReLU(-CAM) / Z",
          "[lesson08]") {
  Generator gen(12);
  CamClassifier model({}, 10, gen);
  model.to(kFloat64);
  NDArray images = NDArray::uniform({3, 3, 64, 64}, gen, 0, 1, kFloat64);
  const std::vector<Index> classes = {0, 5, 5};
  GradCam g = grad_cam(model, images, classes, 3);
  NDArray counterfactual = counterfactual_grad_cam_from_gradients(g.features, g.gradients);
  NDArray cam = class_activation_maps(g.features, model.classifier.weight.data(), classes);
  check_close(counterfactual * 64.0, relu(-cam), 1e-12);
  // Where the CAM is positive the counterfactual map is 0, and the other way round.
  check_close(counterfactual * g.maps, NDArray::zeros({3, 8, 8}, kFloat64), 0);
}
