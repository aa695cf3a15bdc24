// nn/viz/panels.h: magnification, box outlines, the map's peak marked, figures of rows.
#include "nn/viz/panels.h"
#include "scratch.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

NDArray rgb_at(const NDArray& picture, Index y, Index x) {
  return f64({picture.at({0, y, x}), picture.at({1, y, x}), picture.at({2, y, x})}, {3});
}

}  // namespace

TEST_CASE("viz panels: magnify repeats each pixel zoom x zoom times", "[viz]") {
  NDArray image = NDArray::zeros({3, 2, 2}, kFloat32);
  image.set({1, 0, 1}, 0.5);
  const NDArray big = viz::magnify(image, 3);
  REQUIRE(big.shape() == Shape{3, 6, 6});
  for (Index y = 0; y < 6; ++y)
    for (Index x = 0; x < 6; ++x) CHECK(big.at({1, y, x}) == (y < 3 && x >= 3 ? 0.5 : 0.0));
  CHECK_THAT(error_message([&] {
               viz::magnify(NDArray::zeros({2, 2}), 2);
             }),
             Contains("magnify: expects an RGB image [3, H, W]"));
}

TEST_CASE("viz panels: the box is outlined in cyan, the inside untouched", "[viz]") {
  const viz::Panel panel =
      viz::image_panel(NDArray::zeros({3, 8, 8}, kFloat32), {data::Box{2, 1, 5, 4}}, 2, "c");
  REQUIRE(panel.picture.shape() == Shape{3, 16, 16});
  check_close(rgb_at(panel.picture, 2, 4), f64({0, 0.9, 1}, {3}), 1e-6);  // top-left corner
  check_close(rgb_at(panel.picture, 7, 9), f64({0, 0.9, 1}, {3}),
              1e-6);  // bottom-right (x1, y1 excluded)
  check_close(rgb_at(panel.picture, 4, 6), f64({0, 0, 0}, {3}), 0);   // inside
  check_close(rgb_at(panel.picture, 8, 10), f64({0, 0, 0}, {3}), 0);  // outside
}

TEST_CASE("viz panels: a canvas panel outlines every object's box", "[viz]") {
  data::CanvasObject a, b;
  a.box = {0, 0, 2, 2};
  b.box = {4, 4, 8, 8};
  const viz::Panel panel = viz::canvas_panel(NDArray::zeros({3, 8, 8}), {a, b}, 1, "two");
  check_close(rgb_at(panel.picture, 0, 0), f64({0, 0.9, 1}, {3}), 1e-6);
  check_close(rgb_at(panel.picture, 7, 7), f64({0, 0.9, 1}, {3}), 1e-6);
}

TEST_CASE("viz panels: the map's peak is the first largest pixel, and is marked", "[viz]") {
  NDArray map = NDArray::zeros({8, 8}, kFloat64);
  map.set({5, 2}, 3);
  map.set({6, 7}, 3);
  const viz::MapPeak peak = viz::map_peak(map);
  CHECK(peak.x == 2);
  CHECK(peak.y == 5);
  const viz::Panel panel = viz::map_panel(NDArray::zeros({3, 8, 8}), map, {}, 4, "m");
  // The cross is white at the centre of the magnified pixel (2, 5).
  check_close(rgb_at(panel.picture, 5 * 4 + 2, 2 * 4 + 2), f64({1, 1, 1}, {3}), 0);
  CHECK_THAT(error_message([&] {
               viz::map_panel(NDArray::zeros({3, 8, 8}), NDArray::zeros({4, 4}), {}, 2, "m");
             }),
             Contains("map_panel: the map must be [H, W] of the image"));
}

TEST_CASE("viz panels: write_panels lays out rows, labels and the colour scale", "[viz]") {
  ScratchFolder dir("panels");
  const viz::Panel a = viz::image_panel(NDArray::full({3, 8, 8}, 0.5), {}, 2, "a");
  viz::write_panels(dir / "plain.png", {{a, a}, {a}});
  viz::write_panels(dir / "labelled.png", {{a, a}, {a}},
                    {.row_labels = {"first row", "second"}, .scale_note = "own scale"});
  const NDArray plain = viz::read_image(dir / "plain.png");
  const NDArray labelled = viz::read_image(dir / "labelled.png");
  // Two columns of 16 pixels, a 4-pixel gap and margins; a label column and a footer added.
  CHECK(plain.size(2) == 4 + 16 + 4 + 16 + 4);
  CHECK(labelled.size(2) > plain.size(2));
  CHECK(labelled.size(1) > plain.size(1));
  const viz::Panel other = viz::image_panel(NDArray::zeros({3, 4, 4}), {}, 2, "b");
  CHECK_THAT(error_message([&] {
               viz::write_panels(dir / "bad.png", {{a, other}});
             }),
             Contains("write_panels: panels must all be 16x16"));
  CHECK_THAT(error_message([&] { viz::write_panels(dir / "none.png", {}); }),
             Contains("no panels"));
}
