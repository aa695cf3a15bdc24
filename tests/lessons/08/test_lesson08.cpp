// Lesson 08's functions: the canvas labels, the encoder's shapes, a float64 gradcheck of the
// whole classifier (tolerances: gradcheck's defaults, eps 1e-6, atol 1e-5, rtol 1e-3), CAM and
// Grad-CAM of the classifier against each other, the pointing game played with it, and the
// metrics. (The maps' and the pointing game's measures by hand: tests/interpret/.)
#include <cmath>

#include "lessons/08_cnn_cam/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson08;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// A tiny encoder (2, 3, 4 channels) for fast tests; 16x16 images give a 2x2 grid.
constexpr EncoderShape kTiny{.in_channels = 3, .channels1 = 2, .channels2 = 3, .channels3 = 4};

data::CanvasObject object(Index label, data::Box box) {
  data::CanvasObject o;
  o.label = label;
  o.box = box;
  return o;
}

data::CanvasExample example(std::vector<data::CanvasObject> objects, Index size = 8) {
  data::CanvasExample e;
  e.image = NDArray::zeros({3, size, size});
  e.objects = std::move(objects);
  return e;
}

}  // namespace

TEST_CASE("to_canvas_set: multi-hot labels, one per class present however often", "[lesson08]") {
  std::vector<data::CanvasExample> examples = {
      example({object(2, {0, 0, 2, 2}), object(2, {4, 4, 6, 6}), object(0, {2, 0, 4, 2})}),
      example({object(1, {1, 1, 3, 3})})};
  CanvasSet set = to_canvas_set(examples, 3);
  CHECK(set.images.shape() == Shape{2, 3, 8, 8});
  check_close(set.labels, f64({1, 0, 1, 0, 1, 0}, {2, 3}));
  CHECK(set.objects[0].size() == 3);
  CHECK(class_counts(set) == std::vector<Index>{1, 1, 1});
  std::vector<data::Box> bags = boxes_of_class(set.objects[0], 2);
  REQUIRE(bags.size() == 2);
  CHECK(bags[1].x0 == 4);
  CHECK(boxes_of_class(set.objects[1], 2).empty());
  CHECK_THAT(error_message([&] {
               to_canvas_set({example({object(3, {0, 0, 1, 1})})}, 3);
             }),
             Contains("object of class 3, outside 0..2"));
  CHECK_THAT(error_message([] { to_canvas_set({}, 3); }), Contains("no canvases"));
}

TEST_CASE("make_canvas_data: synthetic splits, labels matching the objects", "[lesson08]") {
  CanvasData d =
      make_canvas_data({.train = 12, .validation = 3, .test = 5, .seed = 4, .synthetic = true});
  CHECK(d.class_names.size() == 10);
  CHECK(d.train.images.shape() == Shape{12, 3, 64, 64});
  CHECK(d.validation.size() == 3);
  CHECK(d.test.labels.shape() == Shape{5, 10});
  for (Index i = 0; i < d.test.size(); ++i) {
    const auto& objects = d.test.objects[static_cast<std::size_t>(i)];
    CHECK((objects.size() >= 1 && objects.size() <= 3));
    for (Index c = 0; c < 10; ++c)
      CHECK((d.test.labels.at({i, c}) == 1) == !boxes_of_class(objects, c).empty());
  }
  // Fixed seed: the same canvases again.
  CanvasData again =
      make_canvas_data({.train = 12, .validation = 3, .test = 5, .seed = 4, .synthetic = true});
  check_close(again.test.images, d.test.images, 0);
  CHECK_THAT(error_message([] { make_canvas_data({.train = 0, .synthetic = true}); }),
             Contains("at least one canvas"));
}

TEST_CASE("CanvasEncoder: 3x64x64 canvases become an 8x8 grid of 64-d features", "[lesson08]") {
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
  CamClassifier model({}, 10, gen);
  CHECK(model.forward(images).shape() == Shape{2, 10});
  CHECK(model.classes() == 10);
}

TEST_CASE("gradcheck of the whole classifier and its loss, float64", "[lesson08][gradcheck]") {
  Generator gen(7);
  CamClassifier model(kTiny, 3, gen);
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

TEST_CASE("standardised input and class priors", "[lesson08]") {
  // Pixels 0, 0, 0, 1 (x 3 channels): mean 1/4, std sqrt(3)/4.
  NDArray images = f64({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 3, 2, 2});
  PixelStatistics s = pixel_statistics(images);
  CHECK_THAT(s.mean, WithinAbs(0.25, 1e-15));
  CHECK_THAT(s.std, WithinAbs(std::sqrt(3.0) / 4, 1e-15));
  CHECK(pixel_statistics(NDArray::ones({1, 3, 2, 2})).std == 1);  // nothing to scale

  // An encoder with statistics (m, s) on x computes what a plain one computes on (x - m) / s.
  Generator gen(4), same(4);
  CanvasEncoder standardised(kTiny, gen), plain(kTiny, same);
  standardised.set_input_statistics(0.2, 0.4);
  NDArray x = NDArray::uniform({2, 3, 16, 16}, gen);
  NoGradGuard no_graph;
  check_close(standardised(Tensor(x)).data(), plain(Tensor((x - 0.2) / 0.4)).data(), 1e-5);
  CHECK_THAT(error_message([&] { plain.set_input_statistics(0, 0); }), Contains("positive std"));

  // Priors: class 2 on 1 of 2 canvases -> (1 + 1) / (2 + 2) = 1/2, log-odds 0; class 0 on
  // none -> 1/4, log(1/3).
  CanvasSet set =
      to_canvas_set({example({object(2, {0, 0, 2, 2})}), example({object(1, {0, 0, 2, 2})})}, 3);
  CamClassifier model(kTiny, 3, gen);
  initialise_class_priors(model.classifier, set);
  CHECK_THAT(model.classifier.bias.data().at({2}), WithinAbs(0.0, 1e-7));
  CHECK_THAT(model.classifier.bias.data().at({0}), WithinAbs(std::log(1.0 / 3), 1e-7));
  CamClassifier wrong(kTiny, 4, gen);
  CHECK_THAT(error_message([&] { initialise_class_priors(wrong.classifier, set); }),
             Contains("3 classes in the data, 4 in the model"));
}

TEST_CASE("CAM averages to the logit minus its bias", "[lesson08]") {
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

TEST_CASE("Grad-CAM on the last grid is ReLU(CAM) / Z for a GAP + linear head", "[lesson08]") {
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
}

TEST_CASE("grad_cam's graph cut at A gives the gradient of retain_grad on the full graph",
          "[lesson08]") {
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

TEST_CASE("average precision and the classification report by hand", "[lesson08]") {
  // Ranked: pos, neg, pos, neg -> precisions at the positives 1/1 and 2/3.
  CHECK_THAT(average_precision({0.9, 0.8, 0.7, 0.6}, {true, false, true, false}),
             WithinAbs(5.0 / 6, 1e-15));
  CHECK(average_precision({0.1, 0.9, 0.5}, {false, true, true}) == 1.0);
  CHECK(average_precision({0.1, 0.9}, {false, false}) == 0.0);

  // 3 canvases, 2 classes. Class 0: TP 1, FP 1, FN 1 -> F1 = 2/(2+1+1) = 0.5.
  NDArray logits = f64({2, -1, 1, 3, -2, -4}, {3, 2});
  NDArray labels = f64({1, 0, 0, 1, 1, 0}, {3, 2});
  ClassificationReport r = evaluate_classifier(logits, labels);
  CHECK(r.support == std::vector<Index>{2, 1});
  CHECK(r.f1[0] == 0.5);
  CHECK(r.f1[1] == 1.0);
  CHECK_THAT(r.average_precision[0], WithinAbs(0.5 * (1.0 + 2.0 / 3), 1e-15));  // scores 2, 1, -2
  CHECK(r.average_precision[1] == 1.0);
  // Only canvas 0 is entirely right: canvas 1 adds class 0, canvas 2 misses it.
  CHECK_THAT(r.exact_match, WithinAbs(1.0 / 3, 1e-15));
  CHECK_THAT(r.mean_average_precision, WithinAbs((5.0 / 6 + 1) / 2, 1e-15));
  CHECK(r.loss > 0);
}

TEST_CASE("pointing_pairs: one per class present, distractor when another class is there",
          "[lesson08]") {
  CanvasSet set = to_canvas_set({example({object(2, {0, 0, 2, 2}), object(2, {4, 4, 6, 6})}),
                                 example({object(0, {0, 0, 2, 2}), object(1, {4, 4, 6, 6})})},
                                3);
  std::vector<PointingPair> pairs = pointing_pairs(set);
  REQUIRE(pairs.size() == 3);
  CHECK((pairs[0].canvas == 0 && pairs[0].label == 2 && !pairs[0].distractor));
  CHECK((pairs[1].canvas == 1 && pairs[1].label == 0 && pairs[1].distractor));
  CHECK((pairs[2].canvas == 1 && pairs[2].label == 1 && pairs[2].distractor));
}

TEST_CASE("play_pointing_game: every map kind scored, CAM and Grad-CAM agree", "[lesson08]") {
  CanvasData d =
      make_canvas_data({.train = 1, .validation = 1, .test = 6, .seed = 2, .synthetic = true});
  Generator gen(2);
  CamClassifier model({}, 10, gen);
  PointingResults p = play_pointing_game(model, d.test, {.tolerance = 2, .seed = 1, .batch = 4});
  REQUIRE(p.pairs.size() == pointing_pairs(d.test).size());
  REQUIRE(p.hits.size() == p.pairs.size());
  CHECK(p.identity_gap < 1e-5);  // float32 rounding
  // Where the CAM has a positive cell, the two 8x8 maps peak within one cell of each other.
  CHECK(p.largest_shift <= 8);
  CHECK(p.same_point >= 1);
  double expected = 0;
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    expected += p.random_expected[i];
    const auto boxes = boxes_of_class(d.test.objects[static_cast<std::size_t>(p.pairs[i].canvas)],
                                      p.pairs[i].label);
    CHECK(p.random_expected[i] == hit_area_share(boxes, 64, 2));
    // The centre baseline points at pixel (32, 32).
    CHECK(p.hits[i][kCentre] == (pointing_hit({32, 32}, boxes, 2) ? 1.0 : 0.0));
  }
  CHECK_THAT(p.expected_all.hit_rate(),
             WithinAbs(expected / static_cast<double>(p.pairs.size()), 1e-12));
  CHECK(p.all.size() == kMapKinds);
  CHECK(std::string(map_kind_name(kGradCam16)) == "Grad-CAM, 16x16 (block 2)");
}

TEST_CASE("training lowers the loss on synthetic canvases", "[lesson08]") {
  CanvasData d =
      make_canvas_data({.train = 48, .validation = 16, .test = 1, .seed = 1, .synthetic = true});
  Generator gen(1);
  CamClassifier model(kTiny, 10, gen);
  const double before =
      evaluate_classifier(predict_logits(model, d.validation.images), d.validation.labels).loss;
  std::vector<EpochRecord> records = train_classifier(
      model, d.train, d.validation, {.epochs = 3, .batch = 8, .lr = 1e-2, .progress = false});
  REQUIRE(records.size() == 3);
  CHECK(records.back().train_loss < records.front().train_loss);
  CHECK(records.back().validation_loss < before);
  CHECK(records[1].epoch == 2);
  CHECK_THAT(error_message([&] { train_classifier(model, d.train, d.validation, {.epochs = 0}); }),
             Contains("at least 1 epoch"));
}

TEST_CASE("figures: boxes outlined, the maximum marked, panels laid out", "[lesson08]") {
  const Index size = 16, zoom = 2;
  NDArray image = NDArray::zeros({3, size, size});
  std::vector<data::CanvasObject> objects = {object(1, {2, 3, 6, 8})};
  Panel plain = canvas_panel(image, objects, zoom, "bag");
  CHECK(plain.picture.shape() == Shape{3, 32, 32});
  CHECK_THAT(plain.picture.at({1, 6, 4}),
             WithinAbs(0.9, 1e-6));           // cyan on the top edge (y0 * 2 = 6)
  CHECK(plain.picture.at({0, 10, 10}) == 0);  // inside the box: the black canvas

  NDArray map = NDArray::zeros({size, size}, kFloat64);
  map.set({12, 4}, 1.0);  // largest at x = 4, y = 12
  Panel marked = map_panel(image, map, boxes_of_class(objects, 1), zoom, "CAM");
  for (Index c = 0; c < 3; ++c)
    CHECK(marked.picture.at({c, 12 * 2 + 1, 4 * 2 + 1}) == 1.0f);  // white cross

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "attend_lesson08_panels.png";
  write_panels(path.string(), {{plain, marked}, {plain}});
  NDArray read = viz::read_image(path);
  CHECK(read.shape() == Shape{3, 4 + 2 * (32 + 4 + 12 + 4) + 4, 2 * 4 + 2 * 32 + 4});
  std::filesystem::remove(path);
  CHECK_THAT(error_message([] { write_panels("x.png", {}); }), Contains("no panels"));
}
