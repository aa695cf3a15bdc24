// (e) The figure: for a few conflicting test canvases, each model's map of the cue class over
// the canvas (nn/viz/panels.h draws the panels). The trousers' boxes and the band are outlined;
// a cross marks each map's largest pixel; under each map, the model's probability that the
// class is on the canvas. A shortcut shows as a map on the band, and a high probability on a
// canvas with a band and no trouser.
#include <cmath>

#include "lesson.h"

namespace attend::lesson14 {
namespace {

// What the first panel shows: whether the class's item and the band are on the canvas.
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

std::vector<viz::AttentionExample> write_overlays(const std::string& png, const CueSet& set,
                                                  const std::vector<Index>& canvases, Index label,
                                                  const std::string& class_name,
                                                  const std::vector<MapColumn>& columns,
                                                  Index zoom) {
  if (canvases.empty()) fail("write_overlays: no canvases to draw");
  std::vector<std::int64_t> ids(canvases.begin(), canvases.end());
  const NDArray images =
      index_select(set.set.images, 0, NDArray::from_vector(ids, {static_cast<Index>(ids.size())}));
  std::vector<ColumnMaps> maps;
  for (const MapColumn& column : columns) maps.push_back(column_maps(column, images, label));
  const Index side = images.size(2);
  std::vector<std::vector<viz::Panel>> rows;
  std::vector<viz::AttentionExample> examples;
  for (std::size_t r = 0; r < canvases.size(); ++r) {
    const auto i = static_cast<std::size_t>(canvases[r]);
    const auto row = static_cast<Index>(r);
    const NDArray canvas = slice(images, 0, row, row + 1).reshape({3, side, side});
    const std::vector<data::Box> items = boxes_of_class(set.set.objects[i], label);
    std::vector<data::Box> outlined = items;
    const bool item = !outlined.empty();
    if (set.has_cue[i]) outlined.push_back(set.cue_box[i]);
    const std::string caption = canvas_caption(item, set.has_cue[i]);
    std::vector<viz::Panel> panels = {viz::image_panel(canvas, outlined, zoom, caption)};
    // The viewer's example: the canvas, the item's boxes and the band's, every model's map.
    viz::AttentionExample& e = examples.emplace_back(viz::image_example(
        fmt::format("conflicting test canvas {}: {}", i, caption), canvas, items, class_name));
    if (set.has_cue[i]) e.boxes.push_back(viz::attention_box(set.cue_box[i], "band"));
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const NDArray map = slice(maps[c].maps, 0, row, row + 1).reshape({side, side});
      panels.push_back(
          viz::map_panel(canvas, map, outlined, zoom,
                         fmt::format("{} {:.2f}", columns[c].name, maps[c].probability[r])));
      viz::AttentionMap& m = e.maps.emplace_back(
          viz::AttentionMap{.method = columns[c].name, .values = viz::map_rows(map)});
      m.scores.emplace_back("probability of the class", maps[c].probability[r]);
      if (item) m.scores.emplace_back("mass in box", interpret::mass_inside_boxes(map, items));
      if (set.has_cue[i])
        m.scores.emplace_back("mass on the band",
                              interpret::mass_inside_boxes(map, {set.cue_box[i]}));
    }
    rows.push_back(panels);
  }
  viz::write_panels(png, rows,
                    {.scale_note = "each map scaled to its own maximum; under it, the model's "
                                   "probability that the class is on the canvas"});
  return examples;
}

}  // namespace attend::lesson14
