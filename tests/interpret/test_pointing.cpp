// interpret/pointing.h: the pointing game on hand-made maps and boxes, the random
// baseline's expectation (by hand and by simulation), the mass inside the boxes, and the
// per-class tally.
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("map_maximum, distance_to_box and pointing_hit on hand-made maps", "[interpret]") {
  // The largest value 5 appears twice: the first in row-major order wins.
  NDArray map = f64({0, 1, 2, 3, 5, 1, 0, 5, 2}, {3, 3});
  Pixel p = map_maximum(map);
  CHECK(p.x == 1);
  CHECK(p.y == 1);
  const data::Box box{2, 3, 5, 6};  // pixels x 2..4, y 3..5
  CHECK(distance_to_box({3, 4}, box) == 0);
  CHECK(distance_to_box({4, 5}, box) == 0);
  CHECK(distance_to_box({5, 4}, box) == 1);  // one right of the last column
  CHECK(distance_to_box({0, 4}, box) == 2);
  CHECK_THAT(distance_to_box({7, 9}, box), WithinAbs(5.0, 1e-15));  // (3, 4) away from (4, 5)
  CHECK(pointing_hit({5, 4}, {box}, 1));
  CHECK_FALSE(pointing_hit({5, 4}, {box}, 0.99));
  CHECK_FALSE(pointing_hit({7, 9}, {box}, 4.9));
  CHECK(pointing_hit({7, 9}, {box}, 5));
  CHECK(pointing_hit({0, 0}, {box, data::Box{0, 0, 1, 1}}, 0));  // any box of the class
  CHECK_FALSE(pointing_hit({0, 0}, {}, 100));                    // no box: never a hit
}

TEST_CASE("the random baseline: the hit area share, by hand and by simulation", "[interpret]") {
  // A 2x3 box (6 pixels) on a 4x4 canvas: 6/16.
  const data::Box box{1, 0, 3, 3};  // x 1..2, y 0..2
  CHECK(hit_area_share({box}, 4, 0) == 6.0 / 16);
  // Tolerance 1 adds the 4-neighbours (not the diagonals, at distance sqrt 2): the columns
  // x = 0 and x = 3 for y 0..2 (6 pixels) and the row y = 3 for x 1..2 (2 pixels).
  CHECK(hit_area_share({box}, 4, 1) == 14.0 / 16);
  CHECK(hit_area_share({box}, 4, 1.5) == 16.0 / 16);
  // Two overlapping boxes count their union once.
  CHECK(hit_area_share({box, data::Box{1, 0, 2, 1}}, 4, 0) == 6.0 / 16);

  // Maps of independent uniform values point at a uniformly random pixel, so their hit rate
  // converges to the share: 4000 maps, standard error sqrt(p(1-p)/n) = 0.0077 here.
  Generator gen(9);
  const std::vector<data::Box> boxes = {data::Box{3, 5, 9, 12}};
  const double expected = hit_area_share(boxes, 16, 1);
  double hits = 0;
  const int maps = 4000;
  for (int i = 0; i < maps; ++i)
    hits += pointing_hit(map_maximum(NDArray::uniform({16, 16}, gen, 0, 1, kFloat64)), boxes, 1);
  // The 6x7 box (42 pixels) widened by 1: two columns of 7 and two rows of 6, corners cut.
  CHECK_THAT(expected, WithinAbs((42.0 + 14 + 12) / 256, 1e-15));
  CHECK_THAT(hits / maps, WithinAbs(expected, 4 * std::sqrt(expected * (1 - expected) / maps)));
}

TEST_CASE("mass_inside_boxes and PointingTally on hand-made numbers", "[interpret]") {
  NDArray map = f64({1, 1, 0, 0, 2, 0, 0, 0, 4}, {3, 3});  // total 8
  CHECK(mass_inside_boxes(map, {data::Box{0, 0, 2, 2}}) == 4.0 / 8);
  CHECK(mass_inside_boxes(map, {data::Box{0, 0, 2, 2}, data::Box{1, 1, 3, 3}}) == 8.0 / 8);
  CHECK(mass_inside_boxes(NDArray::zeros({3, 3}, kFloat64), {data::Box{0, 0, 1, 1}}) == 0);
  CHECK_THAT(error_message([] {
               mass_inside_boxes(f64({1, -1}, {1, 2}), {});
             }),
             Contains("negative"));
  // A map with negatives is shifted so that its lowest value is 0; one without is unchanged.
  CHECK(non_negative_map(f64({1, -1, 3}, {1, 3})).to_vector() == std::vector<double>{2, 0, 4});
  CHECK(non_negative_map(map).to_vector() == map.to_vector());
  CHECK(mass_inside_boxes(non_negative_map(f64({-1, 1}, {1, 2})), {data::Box{1, 0, 2, 1}}) == 1);

  PointingTally tally(3);
  tally.record(0, 1, 0.5);
  tally.record(0, 1, 0.5);
  tally.record(0, 1, 0.5);
  tally.record(1, 0, 0.1);
  CHECK(tally.hit_rate() == 0.75);            // 3 hits in 4 pairs
  CHECK(tally.class_mean_hit_rate() == 0.5);  // (1 + 0) / 2; class 2 has no pairs
  CHECK(tally.class_hit_rate(1) == 0);
  CHECK(tally.pairs(0) == 3);
  CHECK_THAT(tally.mean_mass_share(), WithinAbs(1.6 / 4, 1e-15));
  CHECK_THAT(error_message([&] { tally.record(3, 1, 0); }), Contains("class 3 is outside 0..2"));
}

TEST_CASE("PointingTally::class_hit_rate names a class it does not count", "[interpret]") {
  interpret::PointingTally tally(3);
  tally.record(2, 1, 0.5);
  CHECK(tally.class_hit_rate(2) == 1.0);
  CHECK_THROWS_WITH(tally.class_hit_rate(3),
                    "PointingTally::class_hit_rate: class 3 is outside 0..2");
  CHECK_THROWS_WITH(tally.class_hit_rate(-1),
                    "PointingTally::class_hit_rate: class -1 is outside 0..2");
}
