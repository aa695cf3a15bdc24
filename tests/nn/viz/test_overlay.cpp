#include <sstream>

#include "nn/viz/bitmap_text.h"
#include "nn/viz/image.h"
#include "nn/viz/overlay.h"
#include "scratch.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// Perceived brightness of pixel (y, x) of an RGB image [3, H, W].
double luminance(const NDArray& rgb, Index y, Index x) {
  return 0.2126 * rgb.at({0, y, x}) + 0.7152 * rgb.at({1, y, x}) + 0.0722 * rgb.at({2, y, x});
}

// An 8x8 attention grid with all its mass on cell (row, column).
NDArray one_hot_grid(Index row, Index column) {
  NDArray grid = NDArray::zeros({8, 8});
  grid.set({row, column}, 1);
  return grid;
}

// The numbers of a data file, block by block (blocks are separated by blank lines).
std::vector<std::vector<double>> number_blocks(const std::string& text) {
  std::vector<std::vector<double>> blocks(1);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      if (!blocks.back().empty()) blocks.emplace_back();
    } else if (line[0] != '#') {
      std::istringstream numbers(line);
      double value;
      while (numbers >> value) blocks.back().push_back(value);
    }
  }
  if (blocks.back().empty()) blocks.pop_back();
  return blocks;
}

}  // namespace

TEST_CASE("viz: all attention on one cell makes that cell's pixel box the brightest", "[viz]") {
  const NDArray gray = NDArray::full({1, 64, 64}, 0.5);
  for (auto [row, column] : {std::pair<Index, Index>{2, 5}, {0, 0}, {7, 7}, {4, 1}}) {
    NDArray overlay = viz::attention_overlay(gray, one_hot_grid(row, column));
    REQUIRE(overlay.shape() == Shape{3, 64, 64});
    // The brightest pixel lies in the cell's 8x8 box ...
    Index best_y = 0, best_x = 0;
    for (Index y = 0; y < 64; ++y) {
      for (Index x = 0; x < 64; ++x) {
        if (luminance(overlay, y, x) > luminance(overlay, best_y, best_x)) best_y = y, best_x = x;
      }
    }
    INFO("cell (" << row << ", " << column << "), brightest pixel (" << best_y << ", " << best_x
                  << ")");
    CHECK(best_y / 8 == row);
    CHECK(best_x / 8 == column);
    // ... and a pixel two cells away is darker than the image itself (alpha covers it in
    // inferno's black), while the box's centre is brighter than the image.
    const Index far_y = (row + 4) % 8 * 8 + 4, far_x = (column + 4) % 8 * 8 + 4;
    CHECK(luminance(overlay, far_y, far_x) < 0.5 * 0.5);
    CHECK(luminance(overlay, row * 8 + 4, column * 8 + 4) > 0.5);
  }
}

TEST_CASE("viz: overlay blends with alpha and keeps the image size", "[viz]") {
  Generator generator(7);
  NDArray image = NDArray::uniform({3, 12, 10}, generator);
  NDArray weights = NDArray::uniform({3, 2}, generator);
  viz::OverlayOptions none;
  none.alpha = 0;
  check_close(viz::attention_overlay(image, weights, none), image, 1e-7);
  // A gray [H, W] image becomes RGB; every value stays in [0, 1].
  NDArray overlay = viz::attention_overlay(NDArray::full({12, 10}, 0.9), weights);
  REQUIRE(overlay.shape() == Shape{3, 12, 10});
  for (double v : overlay.to_vector()) {
    CHECK(v >= 0);
    CHECK(v <= 1);
  }
}

TEST_CASE("viz: overlay rejects bad weights, images and alpha", "[viz]") {
  NDArray image = NDArray::zeros({3, 8, 8});
  CHECK_THAT(error_message([&] {
               viz::attention_overlay(image, f64({0.5, -0.5}, {1, 2}));
             }),
             Contains("finite and non-negative, found -0.5"));
  CHECK_THAT(error_message([&] { viz::attention_overlay(image, NDArray::ones({4})); }),
             Contains("non-empty float grid [h, w], not float32 [4]"));
  CHECK_THAT(error_message([&] {
               viz::attention_overlay(NDArray::zeros({2, 8, 8}), f64({1}, {1, 1}));
             }),
             Contains("[1 or 3, H, W] or [H, W], not float32 [2,8,8]"));
  viz::OverlayOptions options;
  options.alpha = 1.5;
  CHECK_THAT(error_message([&] {
               viz::attention_overlay(image, f64({1}, {1, 1}), options);
             }),
             Contains("alpha must be between 0 and 1, not 1.5"));
}

TEST_CASE("viz: an attention overlay PNG and its grid file", "[viz]") {
  ScratchFolder dir("overlay");
  NDArray grid = one_hot_grid(3, 6);
  grid.set({0, 0}, 0.25);
  viz::write_attention_overlay(dir / "overlay.png", NDArray::full({3, 64, 64}, 0.5), grid);
  NDArray png = viz::read_image(dir / "overlay.png");
  REQUIRE(png.shape() == Shape{3, 64, 64});
  CHECK(luminance(png, 3 * 8 + 4, 6 * 8 + 4) > luminance(png, 0 * 8 + 4, 0 * 8 + 4));
  std::vector<std::vector<double>> blocks = number_blocks(read_text(dir / "overlay.txt"));
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == grid.to_vector());
}

TEST_CASE("viz: an attention strip has the image, one overlay per word, and captions", "[viz]") {
  ScratchFolder dir("strip");
  NDArray image = NDArray::full({3, 64, 64}, 0.8);
  std::vector<NDArray> grids = {one_hot_grid(1, 1), one_hot_grid(4, 6), one_hot_grid(7, 2)};
  std::vector<std::string> words = {"a", "cat", "saß"};
  viz::StripOptions plain;
  plain.colour_scale = false;
  viz::write_attention_strip(dir / "strip.png", image, grids, words, plain);

  // 4 tiles of 64 pixels, 4-pixel gaps and margins; below them a 12-pixel caption line.
  NDArray png = viz::read_image(dir / "strip.png");
  REQUIRE(png.shape() == Shape{3, 4 + 64 + 4 + 12 + 4, 4 + 4 * 64 + 3 * 4 + 4});
  // Each caption put dark pixels under its tile; the space between tiles stays white.
  for (Index tile = 0; tile < 4; ++tile) {
    const Index left = 4 + tile * 68;
    int dark = 0;
    for (Index y = 72; y < png.size(1); ++y) {
      for (Index x = left; x < left + 64; ++x) dark += png.at({0, y, x}) < 0.5;
    }
    INFO("tile " << tile);
    CHECK(dark > 3);
    CHECK(png.at({0, 40, left + 64 + 1}) == 1.0);
  }
  // The attended cell of word 1 ("cat") is brighter than its opposite corner.
  const Index left1 = 4 + 2 * 68;
  CHECK(luminance(png, 4 + 4 * 8 + 4, left1 + 6 * 8 + 4) > luminance(png, 4 + 4, left1 + 4) + 0.2);

  // The text file keeps the words exactly (the picture shows "sa?") and the grids.
  const std::string text = read_text(dir / "strip.txt");
  CHECK_THAT(text, Contains("# word 0: a\n"));
  CHECK_THAT(text, Contains("# word 2: saß\n"));
  std::vector<std::vector<double>> blocks = number_blocks(text);
  REQUIRE(blocks.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(blocks[i] == grids[i].to_vector());

  CHECK_THAT(error_message([&] {
               viz::write_attention_strip(dir / "bad.png", image, grids, {"a", "cat"});
             }),
             Contains("3 attention grids but 2 words"));
  CHECK_THAT(
      error_message([&] { viz::write_attention_strip(dir / "bad.jpg", image, grids, words); }),
      Contains("'") && Contains("must end in .png"));
}

TEST_CASE("viz: a strip's colour scale and the outline of a marked region", "[viz]") {
  ScratchFolder dir("strip_scale");
  NDArray image = NDArray::full({3, 64, 64}, 0.8);
  std::vector<NDArray> grids = {one_hot_grid(1, 1), one_hot_grid(4, 6)};
  viz::StripOptions options;  // colour scale on by default
  options.marked_regions = {-1, 4 * 8 + 6};
  viz::write_attention_strip(dir / "strip.png", image, grids, {"a", "cat"}, options);
  NDArray png = viz::read_image(dir / "strip.png");
  // A title line (12 + 4 pixels) above the tiles, a value line (12) under the captions, and
  // the colour bar with its labels to the right of the 3 tiles.
  const Index tiles_right = 4 + 3 * 64 + 2 * 4;
  REQUIRE(png.size(1) == 4 + 16 + 64 + 4 + 12 + 12 + 4);
  REQUIRE(png.size(2) > tiles_right + 8 + 10);
  // The bar: bright (inferno's pale yellow) at the top, black at the bottom.
  const Index bar_x = tiles_right + 8 + 5, top = 4 + 16;
  CHECK(luminance(png, top + 1, bar_x) > 0.8);
  CHECK(luminance(png, top + 62, bar_x) < 0.1);
  // The outline of region (4, 6) on tile 2 is cyan: no red, full green and blue.
  const Index left2 = 4 + 2 * 68, y = top + 4 * 8 + 4, x = left2 + 6 * 8;
  CHECK(png.at({0, y, x}) < 0.05);
  CHECK(png.at({1, y, x}) > 0.95);
  CHECK(png.at({2, y, x}) > 0.95);
  CHECK_THAT(error_message([&] {
               viz::StripOptions bad;
               bad.marked_regions = {0};
               viz::write_attention_strip(dir / "bad.png", image, grids, {"a", "cat"}, bad);
             }),
             Contains("1 marked regions but 2 words"));
  CHECK_THAT(error_message([&] {
               viz::StripOptions bad;
               bad.marked_regions = {0, 64};
               viz::write_attention_strip(dir / "bad.png", image, grids, {"a", "cat"}, bad);
             }),
             Contains("marked region 64 is outside the 8x8 grid"));
}

TEST_CASE("viz: the bitmap font draws ASCII inside its box and replaces the rest", "[viz]") {
  CHECK(viz::printable_ascii("saß\n!") == std::string("sa??") + "!");  // (no trigraph)
  CHECK(viz::printable_ascii("日本 ok") == "?? ok");
  CHECK(viz::text_width("cat", 2) == 2 * viz::text_width("cat", 1));
  NDArray canvas = NDArray::ones({3, 30, 60});
  viz::draw_text(canvas, "Hi", 10, 5, 2, viz::Rgb{0, 0, 0});
  int inside = 0, outside = 0;
  for (Index y = 0; y < 30; ++y) {
    for (Index x = 0; x < 60; ++x) {
      const bool in_box = x >= 10 && x < 10 + viz::text_width("Hi", 2) && y >= 5 &&
                          y < 5 + 2 * viz::kTextLineHeight;
      if (canvas.at({1, y, x}) == 0) ++(in_box ? inside : outside);
    }
  }
  CHECK(inside > 10);
  CHECK(outside == 0);
  // Text running past the edge is clipped, not written out of bounds.
  viz::draw_text(canvas, "far too long a caption", 50, 25, 3, viz::Rgb{1, 0, 0});
  CHECK_THAT(error_message([&] { viz::draw_text(canvas, "x", 0, 0, 0, viz::Rgb{}); }),
             Contains("scale must be at least 1"));
}
