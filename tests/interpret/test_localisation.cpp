// Localisation of attention maps against the objects' boxes (interpret/localisation.h): hits,
// mass in the box and the not-static measure computed by hand, and the region tests.
#include "attend.h"
#include "support.h"

using namespace attend;
using attend::testing::error_message;
using data::CanvasExample;

namespace {

// A caption with its word -> object links (no image needed).
CanvasExample caption(std::vector<std::string> words, std::vector<int> objects,
                      std::vector<data::Box> boxes = {}) {
  CanvasExample example;
  example.words = std::move(words);
  example.word_object = std::move(objects);
  for (const data::Box& box : boxes)
    example.objects.push_back({.label = 0, .noun = 0, .color = 0, .box = box});
  return example;
}

}  // namespace

TEST_CASE("localisation: hits, mass in the box and the not-static measure by hand") {
  // A 2x2 grid over a 16-pixel canvas: region centres at (4, 4), (12, 4), (4, 12), (12, 12).
  // Object 0's box covers the left column, object 1's the bottom-right region.
  CanvasExample canvas =
      caption({"a", "red", "bag", "above", "a", "blue", "boot"}, {-1, 0, 0, -1, -1, 1, 1},
              {data::Box{0, 0, 8, 16}, data::Box{8, 8, 16, 16}});
  NDArray alphas = NDArray::from_list({0.25, 0.25, 0.25, 0.25,  // a
                                       0.6,  0.1,  0.2,  0.1,   // red: argmax 0, in box 0
                                       0.1,  0.5,  0.3,  0.1,   // bag: argmax 1, NOT in box 0
                                       0.25, 0.25, 0.25, 0.25,  // above
                                       0.25, 0.25, 0.25, 0.25,  // a
                                       0.1,  0.1,  0.1,  0.7,   // blue: argmax 3, in box 1
                                       0.0,  0.2,  0.0,  0.8},  // boot: argmax 3, in box 1
                                      {7, 4}, kFloat64);
  interpret::Localisation where = interpret::localisation({canvas}, {alphas}, 2, 16);
  CHECK(where.object_words == 4);
  CHECK(where.hit_rate == Approx(3.0 / 4));
  // By kind: the nouns bag (miss) and boot (hit); the colours red and blue (both hits); the
  // words before an object, "a" and "a", whose uniform maps' argmax is region 0: inside
  // object 0's box (the first "a"), not object 1's (the second).
  CHECK(where.noun_hit_rate == Approx(0.5));
  CHECK(where.colour_hit_rate == Approx(1.0));
  CHECK(where.before_hit_rate == Approx(0.5));
  // Mass: red 0.6 + 0.2, bag 0.1 + 0.3, blue 0.7, boot 0.8.
  CHECK(where.mass_in_box == Approx((0.8 + 0.4 + 0.7 + 0.8) / 4));
  // The nouns "bag" (argmax 1) and "boot" (argmax 3) differ; TV = 1/2 (0.1+0.3+0.3+0.7).
  CHECK(where.multi_object_canvases == 1);
  CHECK(where.argmax_changes == 1.0);
  CHECK(where.total_variation == Approx(0.7));
  // A static map (the same alpha at every word) scores 0 on both.
  NDArray same = NDArray::full({7, 4}, 0.25, kFloat64);
  same.set({0, 2}, 0.4);
  interpret::Localisation fixed = interpret::localisation({canvas}, {same}, 2, 16);
  CHECK(fixed.argmax_changes == 0.0);
  CHECK(fixed.total_variation == 0.0);
}

TEST_CASE("cells_in_box and mass_in_box: a region counts when its centre is in the box") {
  // A 4x4 grid of 8-pixel cells: centres at 4, 12, 20, 28. The box [8, 24) x [0, 12) holds
  // the centres x = 12, 20 and y = 4: regions 1 and 2.
  const data::Box box{8, 0, 24, 12};
  CHECK(interpret::cells_in_box(box, 4, 8.0) == std::vector<Index>{1, 2});
  CHECK(interpret::region_in_box(box, 2, 4, 8.0));
  CHECK_FALSE(interpret::region_in_box(box, 6, 4, 8.0));
  std::vector<double> weights(16, 0.0);
  weights[1] = 0.25;
  weights[2] = 0.5;
  weights[5] = 0.25;
  CHECK(interpret::mass_in_box(weights, box, 4, 8.0) == Approx(0.75));
  CHECK_THAT(error_message([&] { interpret::mass_in_box(weights, box, 3, 8.0); }),
             Catch::Contains("16 weights for a 3x3 grid"));
}

TEST_CASE("localisation: mismatched inputs give one readable error") {
  CanvasExample canvas = caption({"a", "bag"}, {-1, 0}, {data::Box{0, 0, 8, 8}});
  CHECK_THAT(error_message([&] { interpret::localisation({canvas}, {}, 2, 16); }),
             Catch::Contains("1 canvases but 0 attention maps"));
  CHECK_THAT(error_message([&] {
               interpret::localisation({canvas}, {NDArray::full({1, 4}, 0.25, kFloat64)}, 2, 16);
             }),
             Catch::Contains("canvas 0 has 2 words"));
}
