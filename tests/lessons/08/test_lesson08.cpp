// Lesson 08's own functions: the pointing game played with the classifier (every map kind
// scored, CAM and Grad-CAM agreeing) and the figures. The data set, the classifier and its
// gradcheck, Grad-CAM against CAM, the training loop and the metrics are the library's
// (vision/): tests/vision/. The maps' and the pointing game's measures by hand:
// tests/interpret/.
#include "lessons/08_cnn_cam/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson08;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

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

TEST_CASE("classes_on_canvases: one per class present, distractor when another class is there",
          "[lesson08]") {
  CanvasSet set = to_canvas_set({example({object(2, {0, 0, 2, 2}), object(2, {4, 4, 6, 6})}),
                                 example({object(0, {0, 0, 2, 2}), object(1, {4, 4, 6, 6})})},
                                3);
  std::vector<ClassOnCanvas> pairs = classes_on_canvases(set);
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
  REQUIRE(p.pairs.size() == classes_on_canvases(d.test).size());
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

TEST_CASE("figures (nn/viz/panels.h): boxes outlined, the maximum marked, panels laid out",
          "[lesson08]") {
  const Index size = 16, zoom = 2;
  NDArray image = NDArray::zeros({3, size, size});
  std::vector<data::CanvasObject> objects = {object(1, {2, 3, 6, 8})};
  viz::Panel plain = viz::canvas_panel(image, objects, zoom, "bag");
  CHECK(plain.picture.shape() == Shape{3, 32, 32});
  CHECK_THAT(plain.picture.at({1, 6, 4}),
             WithinAbs(0.9, 1e-6));           // cyan on the top edge (y0 * 2 = 6)
  CHECK(plain.picture.at({0, 10, 10}) == 0);  // inside the box: the black canvas

  NDArray map = NDArray::zeros({size, size}, kFloat64);
  map.set({12, 4}, 1.0);  // largest at x = 4, y = 12
  viz::Panel marked = viz::map_panel(image, map, boxes_of_class(objects, 1), zoom, "CAM");
  for (Index c = 0; c < 3; ++c)
    CHECK(marked.picture.at({c, 12 * 2 + 1, 4 * 2 + 1}) == 1.0f);  // white cross

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "attend_lesson08_panels.png";
  viz::write_panels(path, {{plain, marked}, {plain}});
  NDArray read = viz::read_image(path);
  CHECK(read.shape() == Shape{3, 4 + 2 * (32 + 4 + 12 + 4) + 4, 2 * 4 + 2 * 32 + 4});
  std::filesystem::remove(path);
  CHECK_THAT(error_message([] { viz::write_panels("x.png", {}); }), Contains("no panels"));
}
