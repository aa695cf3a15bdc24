// (g) Figures: canvases magnified, their true boxes outlined, maps overlaid (inferno colours,
// nn/viz/overlay.h) and the map's largest pixel marked, so that a pointing-game hit or miss
// can be seen: a hit is a cross inside (or within the tolerance of) an outlined box.
#include <algorithm>

#include "lesson.h"

namespace attend::lesson08 {
namespace {

const viz::Rgb kBoxColour{0.0, 0.9, 1.0};    // cyan: not one of the canvas tints
const viz::Rgb kCrossColour{1.0, 1.0, 1.0};  // white, with a black outline
constexpr int kCrossArm = 5;                 // pixels from the centre of the cross

// Each pixel repeated zoom x zoom times (crisp, unlike a bilinear enlargement).
NDArray magnify(const NDArray& image, Index zoom) {
  if (image.ndim() != 3 || image.size(0) != 3)
    fail("magnify: expects an RGB image [3, H, W], got {}", image.shape());
  const Index height = image.size(1), width = image.size(2);
  const NDArray in = image.to(kFloat32);
  NDArray out = NDArray::empty({3, height * zoom, width * zoom}, kFloat32);
  const float* src = in.data<float>();
  float* dst = out.data<float>();
  for (Index c = 0; c < 3; ++c)
    for (Index y = 0; y < height * zoom; ++y)
      for (Index x = 0; x < width * zoom; ++x)
        dst[(c * height * zoom + y) * width * zoom + x] =
            src[(c * height + y / zoom) * width + x / zoom];
  return out;
}

void set_pixel(NDArray& picture, Index x, Index y, viz::Rgb colour) {
  const Index height = picture.size(1), width = picture.size(2);
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  float* p = picture.data<float>();
  p[(0 * height + y) * width + x] = static_cast<float>(colour.r);
  p[(1 * height + y) * width + x] = static_cast<float>(colour.g);
  p[(2 * height + y) * width + x] = static_cast<float>(colour.b);
}

// The outline of a canvas box, in the magnified picture's pixels.
void outline_box(NDArray& picture, const data::Box& box, Index zoom) {
  const Index x0 = box.x0 * zoom, x1 = box.x1 * zoom - 1, y0 = box.y0 * zoom,
              y1 = box.y1 * zoom - 1;
  for (Index x = x0; x <= x1; ++x)
    set_pixel(picture, x, y0, kBoxColour), set_pixel(picture, x, y1, kBoxColour);
  for (Index y = y0; y <= y1; ++y)
    set_pixel(picture, x0, y, kBoxColour), set_pixel(picture, x1, y, kBoxColour);
}

// A "+" centred on canvas pixel p, white on a black outline so it shows on any colour.
void mark(NDArray& picture, interpret::Pixel p, Index zoom) {
  const Index cx = p.x * zoom + zoom / 2, cy = p.y * zoom + zoom / 2;
  for (int d = -kCrossArm - 1; d <= kCrossArm + 1; ++d)
    for (int side = -1; side <= 1; side += 2) {
      set_pixel(picture, cx + d, cy + side, {0, 0, 0});
      set_pixel(picture, cx + side, cy + d, {0, 0, 0});
    }
  for (int d = -kCrossArm; d <= kCrossArm; ++d) {
    set_pixel(picture, cx + d, cy, kCrossColour);
    set_pixel(picture, cx, cy + d, kCrossColour);
  }
}

void paste(NDArray& canvas, const NDArray& tile, Index x, Index y) {
  const Index height = canvas.size(1), width = canvas.size(2);
  const Index tile_height = tile.size(1), tile_width = tile.size(2);
  float* dst = canvas.data<float>();
  const float* src = tile.data<float>();
  for (Index c = 0; c < 3; ++c)
    for (Index row = 0; row < tile_height; ++row)
      std::copy_n(src + (c * tile_height + row) * tile_width, tile_width,
                  dst + (c * height + y + row) * width + x);
}

// The caption cut to fit `width` pixels, ending in ".." when cut.
std::string fitted(const std::string& caption, Index width, int scale) {
  std::string text = viz::printable_ascii(caption);
  if (viz::text_width(text, scale) <= width) return text;
  while (!text.empty() && viz::text_width(text + "..", scale) > width) text.pop_back();
  return text + "..";
}

// The colour scale of the overlays under the panels: the inferno bar from "lowest" (black) to
// "highest" (pale yellow), and under it the note that says what the two ends are.
void draw_scale(NDArray& figure, Index x, Index y, Index bar_width, Index bar_height,
                const std::string& note) {
  for (Index i = 0; i < bar_width; ++i) {
    const viz::Rgb colour =
        viz::inferno(static_cast<double>(i) / static_cast<double>(bar_width - 1));
    for (Index j = 0; j < bar_height; ++j) set_pixel(figure, x + i, y + j, colour);
  }
  const viz::Rgb black{0, 0, 0};
  const int text_y = static_cast<int>(y + bar_height + 2);
  viz::draw_text(figure, "lowest", static_cast<int>(x), text_y, 1, black);
  viz::draw_text(figure, "highest", static_cast<int>(x + bar_width - viz::text_width("highest", 1)),
                 text_y, 1, black);
  viz::draw_text(figure, note, static_cast<int>(x + bar_width + 8), static_cast<int>(y), 1, black);
}

}  // namespace

Panel canvas_panel(const NDArray& image, const std::vector<data::CanvasObject>& objects, Index zoom,
                   const std::string& caption) {
  Panel panel{magnify(image, zoom), caption};
  for (const data::CanvasObject& object : objects) outline_box(panel.picture, object.box, zoom);
  return panel;
}

Panel map_panel(const NDArray& image, const NDArray& map64, const std::vector<data::Box>& boxes,
                Index zoom, const std::string& caption) {
  // The overlay needs non-negative weights; a CAM has negative cells, so shift it to start
  // at 0 (this does not move its maximum). attention_overlay then scales it to [0, 1].
  const std::vector<double> values = map64.to_vector();
  const double lowest = *std::min_element(values.begin(), values.end());
  const NDArray shifted = map64.to(kFloat64) - lowest;
  Panel panel{viz::attention_overlay(magnify(image, zoom), shifted), caption};
  for (const data::Box& box : boxes) outline_box(panel.picture, box, zoom);
  mark(panel.picture, interpret::map_maximum(map64), zoom);
  return panel;
}

void write_panels(const std::string& png, const std::vector<std::vector<Panel>>& rows,
                  const std::string& scale_note) {
  constexpr int kMargin = 4, kGap = 4, kScale = 1, kBarHeight = 10;
  if (rows.empty() || rows.front().empty()) fail("write_panels: '{}': no panels", png);
  const Index tile_height = rows.front().front().picture.size(1);
  const Index tile_width = rows.front().front().picture.size(2);
  std::size_t widest_row = 0;
  for (const auto& row : rows) widest_row = std::max(widest_row, row.size());
  const Index columns = static_cast<Index>(widest_row);
  const Index row_height = tile_height + kMargin + viz::kTextLineHeight * kScale + kGap;
  const Index footer = scale_note.empty() ? 0 : kBarHeight + 2 * viz::kTextLineHeight + kGap;
  const Index width = 2 * kMargin + columns * tile_width + (columns - 1) * kGap;
  const Index height = 2 * kMargin + static_cast<Index>(rows.size()) * row_height + footer;
  NDArray figure = NDArray::ones({3, height, width}, kFloat32);  // white
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      const Panel& panel = rows[r][i];
      if (panel.picture.size(1) != tile_height || panel.picture.size(2) != tile_width)
        fail("write_panels: panels must all be {}x{}, got {}", tile_height, tile_width,
             panel.picture.shape());
      const Index x = kMargin + static_cast<Index>(i) * (tile_width + kGap);
      const Index y = kMargin + static_cast<Index>(r) * row_height;
      paste(figure, panel.picture, x, y);
      viz::draw_text(figure, fitted(panel.caption, tile_width, kScale), static_cast<int>(x),
                     static_cast<int>(y + tile_height + 2), kScale, viz::Rgb{0, 0, 0});
    }
  }
  if (!scale_note.empty())
    draw_scale(figure, kMargin, kMargin + static_cast<Index>(rows.size()) * row_height, tile_width,
               kBarHeight, scale_note);
  viz::write_png(png, figure);
}

}  // namespace attend::lesson08
