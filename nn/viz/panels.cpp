#include "nn/viz/panels.h"

#include <algorithm>

#include "nn/viz/bitmap_text.h"
#include "nn/viz/colormap.h"
#include "nn/viz/image.h"
#include "nn/viz/overlay.h"
#include "tensor/elementwise.h"
#include "tensor/error.h"

namespace attend::viz {
namespace {

const Rgb kBoxColour{0.0, 0.9, 1.0};    // cyan: not one of the canvas tints
const Rgb kCrossColour{1.0, 1.0, 1.0};  // white, with a black outline
const Rgb kBlack{0, 0, 0};
constexpr int kCrossArm = 5;  // pixels from the centre of the cross
constexpr int kMargin = 4, kGap = 4, kTextScale = 1, kBarHeight = 10;

void check_picture(const NDArray& picture, std::string_view op) {
  if (picture.ndim() != 3 || picture.size(0) != 3 || picture.dtype() != kFloat32)
    fail("{}: expects a float32 RGB picture [3, H, W], got {} {}", op, dtype_name(picture.dtype()),
         to_string(picture.shape()));
}

void set_pixel(NDArray& picture, Index x, Index y, Rgb colour) {
  const Index height = picture.size(1), width = picture.size(2);
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  float* p = picture.data<float>();
  p[(0 * height + y) * width + x] = static_cast<float>(colour.r);
  p[(1 * height + y) * width + x] = static_cast<float>(colour.g);
  p[(2 * height + y) * width + x] = static_cast<float>(colour.b);
}

// A "+" centred on image pixel p, white on a black outline so it shows on any colour.
void mark(NDArray& picture, MapPeak p, Index zoom) {
  const Index cx = p.x * zoom + zoom / 2, cy = p.y * zoom + zoom / 2;
  for (int d = -kCrossArm - 1; d <= kCrossArm + 1; ++d)
    for (int side = -1; side <= 1; side += 2) {
      set_pixel(picture, cx + d, cy + side, kBlack);
      set_pixel(picture, cx + side, cy + d, kBlack);
    }
  for (int d = -kCrossArm; d <= kCrossArm; ++d) {
    set_pixel(picture, cx + d, cy, kCrossColour);
    set_pixel(picture, cx, cy + d, kCrossColour);
  }
}

// The caption cut to fit `width` pixels, ending in ".." when cut.
std::string fitted(const std::string& caption, Index width) {
  std::string text = printable_ascii(caption);
  if (text_width(text, kTextScale) <= width) return text;
  while (!text.empty() && text_width(text + "..", kTextScale) > width) text.pop_back();
  return text + "..";
}

// The inferno bar from "lowest" (black) to "highest" (pale yellow) at x, the note under it from
// the left margin.
void draw_scale(NDArray& figure, Index x, Index y, Index bar_width, const std::string& note) {
  for (Index i = 0; i < bar_width; ++i) {
    const Rgb colour = inferno(static_cast<double>(i) / static_cast<double>(bar_width - 1));
    for (Index j = 0; j < kBarHeight; ++j) set_pixel(figure, x + i, y + j, colour);
  }
  const int text_y = static_cast<int>(y + kBarHeight + 2);
  draw_text(figure, "lowest", static_cast<int>(x), text_y, kTextScale, kBlack);
  draw_text(figure, "highest", static_cast<int>(x + bar_width - text_width("highest", kTextScale)),
            text_y, kTextScale, kBlack);
  draw_text(figure, printable_ascii(note), kMargin, text_y + kTextLineHeight, kTextScale, kBlack);
}

}  // namespace

NDArray magnify(const NDArray& image, Index zoom) {
  if (image.ndim() != 3 || image.size(0) != 3)
    fail("magnify: expects an RGB image [3, H, W], got {}", to_string(image.shape()));
  if (zoom < 1) fail("magnify: zoom must be at least 1, got {}", zoom);
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

void outline_box(NDArray& picture, const data::Box& box, Index zoom) {
  check_picture(picture, "outline_box");
  const Index x0 = box.x0 * zoom, x1 = box.x1 * zoom - 1, y0 = box.y0 * zoom,
              y1 = box.y1 * zoom - 1;
  for (Index x = x0; x <= x1; ++x)
    set_pixel(picture, x, y0, kBoxColour), set_pixel(picture, x, y1, kBoxColour);
  for (Index y = y0; y <= y1; ++y)
    set_pixel(picture, x0, y, kBoxColour), set_pixel(picture, x1, y, kBoxColour);
}

MapPeak map_peak(const NDArray& map) {
  if (map.ndim() != 2 || map.numel() == 0)
    fail("map_peak: expects a non-empty map [h, w], got {}", to_string(map.shape()));
  const std::vector<double> values = map.to_vector();
  const auto largest = std::max_element(values.begin(), values.end());  // the first maximum
  const auto at = static_cast<Index>(largest - values.begin());
  return {at % map.size(1), at / map.size(1)};
}

Panel image_panel(const NDArray& image, const std::vector<data::Box>& boxes, Index zoom,
                  const std::string& caption) {
  Panel panel{magnify(image, zoom), caption};
  for (const data::Box& box : boxes) outline_box(panel.picture, box, zoom);
  return panel;
}

Panel canvas_panel(const NDArray& image, const std::vector<data::CanvasObject>& objects, Index zoom,
                   const std::string& caption) {
  std::vector<data::Box> boxes;
  for (const data::CanvasObject& object : objects) boxes.push_back(object.box);
  return image_panel(image, boxes, zoom, caption);
}

Panel map_panel(const NDArray& image, const NDArray& map, const std::vector<data::Box>& boxes,
                Index zoom, const std::string& caption) {
  if (image.ndim() != 3 || map.ndim() != 2 || map.size(0) != image.size(1) ||
      map.size(1) != image.size(2))
    fail("map_panel: the map must be [H, W] of the image [3, H, W], got map {} and image {}",
         to_string(map.shape()), to_string(image.shape()));
  // The overlay needs non-negative weights; a CAM has negative cells, so shift the map to
  // start at 0 (this does not move its maximum). attention_overlay then scales it to [0, 1].
  const std::vector<double> values = map.to_vector();
  const double lowest = *std::min_element(values.begin(), values.end());
  const NDArray shifted = map.to(kFloat64) - lowest;
  Panel panel{attention_overlay(magnify(image, zoom), shifted), caption};
  for (const data::Box& box : boxes) outline_box(panel.picture, box, zoom);
  mark(panel.picture, map_peak(map), zoom);
  return panel;
}

void write_panels(const std::filesystem::path& png, const std::vector<std::vector<Panel>>& rows,
                  const PanelLayout& layout) {
  if (rows.empty() || rows.front().empty())
    fail("write_panels: '{}': no panels (the first row is empty)", png.string());
  const Index tile_height = rows.front().front().picture.size(1);
  const Index tile_width = rows.front().front().picture.size(2);
  std::size_t widest_row = 0;
  int label_width = 0;
  for (const auto& row : rows) widest_row = std::max(widest_row, row.size());
  for (const std::string& label : layout.row_labels)
    label_width = std::max(label_width, text_width(printable_ascii(label), kTextScale) + kGap);
  const auto columns = static_cast<Index>(widest_row);
  const Index row_height = tile_height + kMargin + kTextLineHeight * kTextScale + kGap;
  const Index footer = layout.scale_note.empty() ? 0 : kBarHeight + 3 * kTextLineHeight + kGap;
  const Index left = kMargin + label_width;
  const Index width = left + kMargin + columns * tile_width + (columns - 1) * kGap;
  const Index height = 2 * kMargin + static_cast<Index>(rows.size()) * row_height + footer;
  NDArray figure = NDArray::ones({3, height, width}, kFloat32);  // white
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Index y = kMargin + static_cast<Index>(r) * row_height;
    if (r < layout.row_labels.size())
      draw_text(figure, printable_ascii(layout.row_labels[r]), kMargin,
                static_cast<int>(y + tile_height / 2 - kTextLineHeight / 2), kTextScale, kBlack);
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      const Panel& panel = rows[r][i];
      check_picture(panel.picture, "write_panels");
      if (panel.picture.size(1) != tile_height || panel.picture.size(2) != tile_width)
        fail("write_panels: panels must all be {}x{}, got {}", tile_height, tile_width,
             to_string(panel.picture.shape()));
      const Index x = left + static_cast<Index>(i) * (tile_width + kGap);
      paste(figure, panel.picture, x, y);
      draw_text(figure, fitted(panel.caption, tile_width), static_cast<int>(x),
                static_cast<int>(y + tile_height + 2), kTextScale, kBlack);
    }
  }
  if (!layout.scale_note.empty())
    draw_scale(figure, left, kMargin + static_cast<Index>(rows.size()) * row_height, tile_width,
               layout.scale_note);
  write_png(png, figure);
}

}  // namespace attend::viz
