// vision/canvas_encoder.h and vision/cam_classifier.h: the encoder's shapes, its input
// standardisation, and a float64 gradcheck of the whole classifier (tolerances: gradcheck's
// defaults, eps 1e-6, atol 1e-5, rtol 1e-3).
#include <algorithm>

#include "attend.h"
#include "support.h"
#include "vision/test_canvases.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::vision;
using Catch::Matchers::Contains;

TEST_CASE("CanvasEncoder: 3x64x64 canvases become an 8x8 grid of 64-d features", "[vision]") {
  Generator gen(1);
  CanvasEncoder encoder({}, gen);
  Tensor images = rand({2, 3, 64, 64}, gen);
  NoGradGuard no_graph;
  Tensor grid = encoder(images);
  CHECK(grid.shape() == Shape{2, 64, 8, 8});
  CHECK(encoder.out_channels() == 64);
  Tensor block2 = encoder.forward_blocks(images, 0, 2);
  CHECK(block2.shape() == Shape{2, 64, 16, 16});
  // Running the blocks in two goes gives the same grid.
  check_close(encoder.forward_blocks(block2, 2, 3).data(), grid.data(), 0);
  CHECK(encoder.parameter_count() == 896 + 18496 + 36928);
  CHECK_THAT(error_message([&] { encoder.forward_blocks(images, 2, 4); }),
             Contains("do not exist"));
  CHECK_THAT(error_message([&] {
               encoder(rand({3, 64, 64}, gen));
             }),
             Contains("expects [B, C, H, W]"));
  CamClassifier model({}, 10, gen);
  CHECK(model.forward(images).shape() == Shape{2, 10});
  CHECK(model.classes() == 10);
  // As an images -> logits module (what the training loop takes), the same logits.
  nn::UnaryModule& any = model;
  check_close(any(images).data(), model.classify(model.encoder(images)).data(), 0);
}

TEST_CASE("CanvasEncoder: input statistics standardise the pixels", "[vision]") {
  // An encoder with statistics (m, s) on x computes what a plain one computes on (x - m) / s.
  Generator gen(4), same(4);
  CanvasEncoder standardised(kTinyEncoder, gen), plain(kTinyEncoder, same);
  standardised.set_input_statistics(0.2, 0.4);
  CHECK(standardised.input_mean() == 0.2);
  CHECK(standardised.input_std() == 0.4);
  NDArray x = NDArray::uniform({2, 3, 16, 16}, gen);
  NoGradGuard no_graph;
  check_close(standardised(Tensor(x)).data(), plain(Tensor((x - 0.2) / 0.4)).data(), 1e-5);
  CHECK_THAT(error_message([&] { plain.set_input_statistics(0, 0); }), Contains("positive std"));
}

TEST_CASE("gradcheck of the whole classifier and its loss, float64", "[vision][gradcheck]") {
  Generator gen(7);
  CamClassifier model(kTinyEncoder, 3, gen);
  model.to(kFloat64);
  model.encoder.set_input_statistics(0.25, 0.5);  // the standardisation is part of the graph
  Tensor images = Tensor(NDArray::uniform({2, 3, 16, 16}, gen, 0, 1, kFloat64), true);
  Tensor targets = tensor({1, 0, 1, 0, 1, 0}, {2, 3}, kFloat64);
  std::vector<Tensor> inputs = model.parameters();
  inputs.push_back(images);
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>&) {
        return nn::binary_cross_entropy_with_logits(model.forward(images), targets);
      },
      inputs, {.max_elements_per_input = 20, .seed = 3});
  INFO(r.report);
  CHECK(r.ok);
  CHECK(r.elements_checked > 50);
  for (const char* op : {"conv2d", "relu", "max_pool2d", "linear"})
    CHECK(std::find(r.ops.begin(), r.ops.end(), op) != r.ops.end());
}
