// vision/grad_cam.h against CAM (interpret/cam.h): for a GAP + linear head, CAM averages to
// the logit minus its bias and Grad-CAM on the last grid is ReLU(CAM) / Z; and cutting the
// graph at the block's output gives the gradient of one full graph. (The maps' arithmetic by
// hand: tests/interpret/test_cam.cpp.)
#include "attend.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::vision;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("CAM averages to the logit minus its bias", "[vision]") {
  Generator gen(3);
  CamClassifier model({}, 10, gen);
  model.to(kFloat64);
  NDArray images = NDArray::uniform({3, 3, 64, 64}, gen, 0, 1, kFloat64);
  NoGradGuard no_graph;
  NDArray features = model.encoder(Tensor(images)).data();
  NDArray logits = model.classify(Tensor(features)).data();
  const std::vector<Index> classes = {0, 4, 9};
  NDArray maps = class_activation_maps(features, model.classifier.weight.data(), classes);
  for (Index b = 0; b < 3; ++b) {
    const Index c = classes[static_cast<std::size_t>(b)];
    const double mean_of_map = mean(slice(maps, 0, b, b + 1)).item();
    CHECK_THAT(mean_of_map,
               WithinAbs(logits.at({b, c}) - model.classifier.bias.data().at({c}), 1e-12));
  }
}

TEST_CASE("Grad-CAM on the last grid is ReLU(CAM) / Z for a GAP + linear head", "[vision]") {
  Generator gen(5);
  CamClassifier model({}, 10, gen);
  model.to(kFloat64);
  NDArray images = NDArray::uniform({4, 3, 64, 64}, gen, 0, 1, kFloat64);
  const std::vector<Index> classes = {1, 1, 7, 3};
  GradCam g = grad_cam(model, images, classes, 3);
  CHECK(g.maps.shape() == Shape{4, 8, 8});
  // dy^c/dA^k_ij = w_k^c / Z at every cell (Z = 64).
  for (Index b = 0; b < 4; ++b)
    for (Index k = 0; k < 64; k += 9)
      for (Index ij = 0; ij < 64; ij += 13)
        CHECK_THAT(
            g.gradients.at({b, k, ij / 8, ij % 8}),
            WithinAbs(
                model.classifier.weight.data().at({classes[static_cast<std::size_t>(b)], k}) / 64,
                1e-15));
  NDArray cam = class_activation_maps(g.features, model.classifier.weight.data(), classes);
  check_close(g.maps * 64.0, relu(cam), 1e-12);
  // The backward filled no parameter gradient that would leak into training.
  for (const Tensor& p : model.parameters()) CHECK_FALSE(p.grad().defined());
  CHECK_THAT(error_message([&] { grad_cam(model, images, classes, 0); }),
             Contains("block must be 1..3"));
  CHECK_THAT(error_message([&] {
               grad_cam(model, images, {1, 2}, 3);
             }),
             Contains("4 images but 2 classes"));
}

TEST_CASE("grad_cam's graph cut at A gives the gradient of retain_grad on the full graph",
          "[vision]") {
  Generator gen(6);
  CamClassifier model({}, 10, gen);
  model.to(kFloat64);
  NDArray images = NDArray::uniform({2, 3, 64, 64}, gen, 0, 1, kFloat64);
  const std::vector<Index> classes = {2, 8};
  GradCam cut = grad_cam(model, images, classes, 2);
  CHECK(cut.maps.shape() == Shape{2, 16, 16});
  // The textbook way: keep the block-2 output's gradient during one full backward.
  Tensor a = model.encoder.forward_blocks(Tensor(images), 0, 2);
  a.retain_grad();
  Tensor logits = model.classify(model.encoder.forward_blocks(a, 2, 3));
  // y = logit[0, 2] + logit[1, 8], the classes of the two images.
  Tensor score =
      sum(slice(slice(logits, 0, 0, 1), 1, 2, 3)) + sum(slice(slice(logits, 0, 1, 2), 1, 8, 9));
  score.backward();
  check_close(cut.gradients, a.grad().data(), 1e-13);
  check_close(cut.features, a.data(), 0);
}
