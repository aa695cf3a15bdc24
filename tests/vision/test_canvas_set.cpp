// vision/canvas_set.h: the multi-hot labels, the three splits, the boxes of a class, one
// canvas as an image, the pixel statistics.
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "attend.h"
#include "support.h"
#include "vision/test_canvases.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::vision;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("to_canvas_set: multi-hot labels, one per class present however often", "[vision]") {
  std::vector<data::CanvasExample> examples = {
      canvas_example({canvas_object(2, {0, 0, 2, 2}), canvas_object(2, {4, 4, 6, 6}),
                      canvas_object(0, {2, 0, 4, 2})}),
      canvas_example({canvas_object(1, {1, 1, 3, 3})})};
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
               to_canvas_set({canvas_example({canvas_object(3, {0, 0, 1, 1})})}, 3);
             }),
             Contains("object of class 3, outside 0..2"));
  CHECK_THAT(error_message([] { to_canvas_set({}, 3); }), Contains("no canvases"));
}

TEST_CASE("canvas_image: canvas i of a set as [3, S, S]", "[vision]") {
  std::vector<data::CanvasExample> examples = {canvas_example({canvas_object(0, {0, 0, 2, 2})}),
                                               canvas_example({canvas_object(1, {0, 0, 2, 2})})};
  examples[1].image.set({2, 5, 6}, 0.5);
  CanvasSet set = to_canvas_set(examples, 2);
  NDArray second = canvas_image(set, 1);
  CHECK(second.shape() == Shape{3, 8, 8});
  CHECK(second.at({2, 5, 6}) == 0.5);
  CHECK(canvas_image(set, 0).at({2, 5, 6}) == 0);
}

TEST_CASE("make_canvas_data: synthetic splits, labels matching the objects", "[vision]") {
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
  CHECK_THAT(error_message([] { make_canvas_data({.synthetic = true, .canvas_size = 60}); }),
             Contains("multiple of 8"));
}

TEST_CASE("pixel_statistics: the mean and standard deviation of every pixel", "[vision]") {
  // Pixels 0, 0, 0, 1 (x 3 channels): mean 1/4, std sqrt(3)/4.
  NDArray images = f64({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 3, 2, 2});
  PixelStatistics s = pixel_statistics(images);
  CHECK_THAT(s.mean, WithinAbs(0.25, 1e-15));
  CHECK_THAT(s.std, WithinAbs(std::sqrt(3.0) / 4, 1e-15));
  CHECK(pixel_statistics(NDArray::ones({1, 3, 2, 2})).std == 1);  // nothing to scale
  CHECK_THAT(error_message([] {
               pixel_statistics(NDArray::zeros({0, 3, 2, 2}));
             }),
             Contains("no pixels"));
}

TEST_CASE("pixel_statistics: float32 pixels give the sums of their float64 copy, to the bit",
          "[vision]") {
  // The statistics sum in float64 without making the copy: the same additions in the same
  // order, so the same numbers exactly (lesson 08 prints them).
  Generator gen(3);
  const NDArray images = NDArray::uniform({4, 3, 5, 5}, gen, 0, 1, kFloat32);
  const PixelStatistics direct = pixel_statistics(images);
  const std::vector<double> copy = images.to_vector();
  double sum = 0, squares = 0;
  for (double v : copy) sum += v;
  const double mean = sum / static_cast<double>(copy.size());
  for (double v : copy) squares += (v - mean) * (v - mean);
  CHECK(direct.mean == mean);
  CHECK(direct.std == std::sqrt(squares / static_cast<double>(copy.size())));
  CHECK_THAT(error_message([] {
               pixel_statistics(NDArray::zeros({2, 3}, kInt64));
             }),
             Contains("pixel_statistics: needs a floating-point array"));
}

TEST_CASE("make_canvas_data: the sets hold the canvases make_canvas_splits draws", "[vision]") {
  // make_canvas_data makes the held-out canvases first and copies the training ones into
  // their set a chunk at a time; the canvases must be those of one make_canvas_splits call.
  const CanvasDataOptions options{
      .train = 130, .validation = 3, .test = 5, .seed = 4, .synthetic = true};
  const CanvasData d = make_canvas_data(options);
  data::CanvasOptions canvas;
  canvas.size = 64;
  canvas.min_item_size = 18;
  canvas.max_item_size = 26;
  const data::CanvasGenerator train(data::synthetic_fashion_mnist(data::Split::kTrain, 6000, 4),
                                    canvas);
  const data::CanvasGenerator held_out(data::synthetic_fashion_mnist(data::Split::kTest, 2000, 4),
                                       canvas);
  const data::CanvasSplits splits = data::make_canvas_splits(train, held_out, 130, 3, 5, 4);
  for (const auto& [set, examples] :
       {std::pair{&d.train, &splits.train}, std::pair{&d.validation, &splits.validation},
        std::pair{&d.test, &splits.test}}) {
    const CanvasSet expected = to_canvas_set(*examples, 10);
    check_close(set->images, expected.images, 0);
    check_close(set->labels, expected.labels, 0);
    REQUIRE(set->objects.size() == expected.objects.size());
    for (std::size_t i = 0; i < set->objects.size(); ++i)
      CHECK(set->objects[i].size() == expected.objects[i].size());
  }
}

TEST_CASE("make_training_canvases: make_canvas_data's training set, canvas for canvas",
          "[vision]") {
  // Lesson 13 frees its training canvases and makes them again: they must be the same ones,
  // to the bit, with the same labels and boxes.
  const CanvasDataOptions options{
      .train = 130, .validation = 3, .test = 5, .seed = 4, .synthetic = true};
  const CanvasData d = make_canvas_data(options);
  const CanvasSet again = make_training_canvases(options);
  check_close(again.images, d.train.images, 0);
  check_close(again.labels, d.train.labels, 0);
  REQUIRE(again.objects.size() == d.train.objects.size());
  for (std::size_t i = 0; i < again.objects.size(); ++i) {
    REQUIRE(again.objects[i].size() == d.train.objects[i].size());
    for (std::size_t k = 0; k < again.objects[i].size(); ++k) {
      CHECK(again.objects[i][k].label == d.train.objects[i][k].label);
      CHECK(again.objects[i][k].box.x0 == d.train.objects[i][k].box.x0);
      CHECK(again.objects[i][k].box.y1 == d.train.objects[i][k].box.y1);
    }
  }
  // Another seed, other canvases: the comparison above can fail.
  CanvasDataOptions other = options;
  other.seed = 5;
  const NDArray other_images = make_training_canvases(other).images;
  CHECK(std::memcmp(other_images.raw_data(), d.train.images.raw_data(), d.train.images.nbytes()) !=
        0);
  CHECK_THAT(error_message([] { make_training_canvases({.train = 0, .synthetic = true}); }),
             Contains("make_training_canvases: every split needs at least one canvas"));
}

TEST_CASE("to_canvas_set: a canvas unlike the first is an error naming both", "[vision]") {
  CHECK_THAT(error_message([] {
               to_canvas_set({canvas_example({}, 8), canvas_example({}, 16)}, 3);
             }),
             Contains("to_canvas_set: canvas 1 is [3,16,16] float32, unlike the first one"));
}
