// (e) Every method's map over the same canvases: one row per method, one column per
// (canvas, class) pair, the class's boxes outlined and each map's largest pixel marked
// (nn/viz/panels.h). A pointing-game hit is a cross inside, or within the tolerance of, a box.
#include "images.h"

namespace attend::lesson13 {
namespace {

// The first pair of each canvas, until `count` pairs.
std::vector<vision::ClassOnCanvas> one_pair_per_canvas(const vision::CanvasSet& set, Index count) {
  std::vector<vision::ClassOnCanvas> chosen;
  for (const vision::ClassOnCanvas& p : vision::classes_on_canvases(set)) {
    if (static_cast<Index>(chosen.size()) >= count) break;
    if (chosen.empty() || chosen.back().canvas != p.canvas) chosen.push_back(p);
  }
  return chosen;
}

}  // namespace

std::vector<viz::AttentionExample> write_method_figure(const std::string& png, CanvasVit& vit,
                                                       vision::CamClassifier& cnn,
                                                       const vision::CanvasSet& set,
                                                       const std::vector<std::string>& class_names,
                                                       Index count, std::uint64_t seed,
                                                       double tolerance) {
  const std::vector<vision::ClassOnCanvas> pairs = one_pair_per_canvas(set, count);
  if (pairs.empty()) return {};
  std::vector<std::int64_t> canvases;
  std::vector<Index> classes;
  for (const vision::ClassOnCanvas& p : pairs) {
    canvases.push_back(p.canvas);
    classes.push_back(p.label);
  }
  const NDArray images = index_select(
      set.images, 0, NDArray::from_vector(canvases, {static_cast<Index>(pairs.size())}));
  vit.eval();
  cnn.eval();
  Generator gen(seed);
  MapBatch maps = vit_maps(vit, images, classes, std::vector<bool>(pairs.size(), true));
  add_baseline_maps(maps, images, gen);
  add_cnn_maps(maps, cnn, images, classes);

  const Index size = images.size(-1);
  std::vector<std::vector<viz::Panel>> rows(1 + maps.maps.size());
  viz::PanelLayout layout{.row_labels = {"canvas"},
                          .scale_note = "each map from its own lowest to its own highest value"};
  std::vector<viz::AttentionExample> examples;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto b = static_cast<Index>(i);
    const NDArray image = squeeze(slice(images, 0, b, b + 1), 0);
    const auto& objects = set.objects[static_cast<std::size_t>(pairs[i].canvas)];
    const auto boxes = vision::boxes_of_class(objects, pairs[i].label);
    const std::string name = class_names[static_cast<std::size_t>(pairs[i].label)];
    rows[0].push_back(viz::image_panel(image, boxes, kZoom, "class: " + name));
    viz::AttentionExample& e = examples.emplace_back(viz::image_example(
        fmt::format("test canvas {}: {}", pairs[i].canvas, name), image, boxes, name));
    for (std::size_t row = 0; row < maps.maps.size(); ++row) {
      const NDArray map = map_of(maps.maps[row], b);
      const NDArray pixels = map.size(0) == size ? map : interpret::upsample_map(map, size);
      rows[row + 1].push_back(viz::map_panel(image, pixels, boxes, kZoom, name));
      // The viewer gets the map at its own resolution, from its own lowest value as drawn.
      const BoxScore score = box_score(map, boxes, size, tolerance);
      e.maps.push_back(
          {.method = method_name(static_cast<Index>(row)),
           .values = viz::map_rows(interpret::non_negative_map(map)),
           .scores = {{"pointing game hit", score.hit ? 1.0 : 0.0}, {"mass in box", score.mass}}});
    }
  }
  for (std::size_t row = 0; row < maps.maps.size(); ++row)
    layout.row_labels.push_back(method_name(static_cast<Index>(row)));
  viz::write_panels(png, rows, layout);
  return examples;
}

}  // namespace attend::lesson13
