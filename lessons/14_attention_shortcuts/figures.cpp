// (e) The figure: for a few conflicting test canvases, each model's map of the cue class over
// the canvas. The band is outlined in white and the items of the class in cyan; under each
// map, the model's probability that the class is on the canvas. A shortcut shows as a map on
// the band, and a high probability on a canvas with a band and no trouser.
#include <algorithm>
#include <cmath>

#include "lesson.h"

namespace attend::lesson14 {
namespace {

const viz::Rgb kBoxColour{0.0, 0.9, 1.0};  // cyan: not one of the canvas tints
const viz::Rgb kCueColour{1.0, 1.0, 1.0};  // white
const viz::Rgb kTextColour{0.0, 0.0, 0.0};
constexpr Index kGap = 6;           // pixels between tiles
constexpr Index kCaptionLines = 1;  // lines of text under each tile

// Each pixel repeated zoom x zoom times (crisp, unlike a bilinear enlargement).
NDArray magnify(const NDArray& image, Index zoom) {
  const Index height = image.size(1), width = image.size(2);
  NDArray out = NDArray::empty({3, height * zoom, width * zoom}, kFloat32);
  const NDArray in = image.to(kFloat32);
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

void outline(NDArray& picture, const data::Box& box, Index zoom, viz::Rgb colour) {
  if (box.x1 <= box.x0) return;  // no band on this canvas
  const Index x0 = box.x0 * zoom, x1 = box.x1 * zoom - 1, y0 = box.y0 * zoom,
              y1 = box.y1 * zoom - 1;
  for (Index x = x0; x <= x1; ++x)
    set_pixel(picture, x, y0, colour), set_pixel(picture, x, y1, colour);
  for (Index y = y0; y <= y1; ++y)
    set_pixel(picture, x0, y, colour), set_pixel(picture, x1, y, colour);
}

void paste(NDArray& figure, const NDArray& tile, Index x, Index y) {
  const Index height = figure.size(1), width = figure.size(2);
  const Index th = tile.size(1), tw = tile.size(2);
  float* dst = figure.data<float>();
  const float* src = tile.data<float>();
  for (Index c = 0; c < 3; ++c)
    for (Index row = 0; row < th; ++row)
      std::copy_n(src + (c * th + row) * tw, tw, dst + (c * height + y + row) * width + x);
}

// What the first tile shows: whether the class's item and the band are on the canvas.
std::string canvas_caption(bool item, bool band) {
  if (item) return band ? "item and band" : "item, no band";
  return band ? "band, no item" : "neither";
}

// A column's maps of `label` on the chosen canvases (the union over its models) and its
// probability that the class is there (from the mean logit).
struct ColumnMaps {
  NDArray maps;
  std::vector<double> probability;
};
ColumnMaps column_maps(const MapColumn& column, const NDArray& images, Index label) {
  ColumnMaps out;
  NDArray logits;
  for (CamClassifier* m : column.models) {
    m->eval();
    const NDArray one = class_maps(*m, images, std::vector<Index>(images.size(0), label));
    out.maps = out.maps.defined() ? maximum(out.maps, one) : one;
    const NDArray l = predict_logits(*m, images, kEvalBatch);
    logits = logits.defined() ? logits + l : l;
  }
  for (Index i = 0; i < images.size(0); ++i)
    out.probability.push_back(
        1 / (1 + std::exp(-logits.at({i, label}) / static_cast<double>(column.models.size()))));
  return out;
}

}  // namespace

void write_overlays(const std::string& png, const CueSet& set, const std::vector<Index>& canvases,
                    Index label, const std::vector<MapColumn>& columns, Index zoom) {
  if (canvases.empty()) fail("write_overlays: no canvases to draw");
  std::vector<std::int64_t> ids(canvases.begin(), canvases.end());
  const NDArray images =
      index_select(set.set.images, 0, NDArray::from_vector(ids, {static_cast<Index>(ids.size())}));
  std::vector<ColumnMaps> maps;
  for (const MapColumn& column : columns) maps.push_back(column_maps(column, images, label));
  const Index side = images.size(2), tile = side * zoom;
  const Index caption = kCaptionLines * (viz::kTextLineHeight + 2);
  const Index width = static_cast<Index>(columns.size() + 1) * (tile + kGap) + kGap;
  const Index height = static_cast<Index>(canvases.size()) * (tile + caption + kGap) + kGap;
  NDArray figure = NDArray::ones({3, height, width}, kFloat32);
  for (std::size_t r = 0; r < canvases.size(); ++r) {
    const auto i = static_cast<std::size_t>(canvases[r]);
    const NDArray canvas = magnify(
        slice(images, 0, static_cast<Index>(r), static_cast<Index>(r) + 1).reshape({3, side, side}),
        zoom);
    const Index y = kGap + static_cast<Index>(r) * (tile + caption + kGap);
    const std::vector<data::Box> boxes = boxes_of_class(set.set.objects[i], label);
    for (std::size_t c = 0; c <= columns.size(); ++c) {
      NDArray picture =
          c == 0 ? canvas.clone()
                 : viz::attention_overlay(canvas, slice(maps[c - 1].maps, 0, static_cast<Index>(r),
                                                        static_cast<Index>(r) + 1)
                                                      .reshape({side, side}));
      for (const data::Box& b : boxes) outline(picture, b, zoom, kBoxColour);
      outline(picture, set.cue_box[i], zoom, kCueColour);
      const Index x = kGap + static_cast<Index>(c) * (tile + kGap);
      paste(figure, picture, x, y);
      const std::string text =
          c == 0 ? canvas_caption(!boxes.empty(), set.has_cue[i])
                 : fmt::format("{} {:.2f}", columns[c - 1].name, maps[c - 1].probability[r]);
      viz::draw_text(figure, text, static_cast<int>(x), static_cast<int>(y + tile + 2), 1,
                     kTextColour);
    }
  }
  viz::write_png(png, figure);
}

}  // namespace attend::lesson14
