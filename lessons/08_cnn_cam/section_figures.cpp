// Section 7 of the program: maps.png, the first test canvases, each followed by its maps.
#include <algorithm>

#include "program.h"

namespace attend::lesson08 {
namespace {

// One row of maps.png: test canvas i, then CAM, Grad-CAM 8x8 and 16x16 of each class on it.
// Each (canvas, class) pair also becomes an example of the viewer's run: the three maps with
// their pointing game hit (within tolerance pixels) and the share of their mass in the boxes.
std::vector<viz::Panel> figure_row(CamClassifier& model, const CanvasData& d, Index i,
                                   Generator& gen, double tolerance, viz::AttentionRun& run) {
  const Index size = d.test.images.size(2);
  const NDArray image = canvas_image(d.test, i);
  const auto& objects = d.test.objects[static_cast<std::size_t>(i)];
  const std::vector<std::string> nouns = data::caption_nouns(d.class_names);
  const std::pair<int, const char*> shown[] = {
      {kCam, "CAM"}, {kGradCam8, "GC8"}, {kGradCam16, "GC16"}};
  std::vector<viz::Panel> row = {
      viz::canvas_panel(image, objects, kZoom, fmt::format("test {}", i))};
  for (const ClassOnCanvas& pair : classes_on_canvases(d.test)) {
    if (pair.canvas != i) continue;
    const std::vector<NDArray> maps =
        explanation_maps(model, image.reshape({1, 3, size, size}), {pair.label}, gen);
    const std::vector<data::Box> boxes = boxes_of_class(objects, pair.label);
    const std::string& noun = nouns[static_cast<std::size_t>(pair.label)];
    viz::AttentionExample& e = run.examples.emplace_back(
        viz::image_example(fmt::format("test {}: {}", i, noun), image, boxes, noun));
    e.target = {noun};
    for (const auto& [kind, tag] : shown) {
      const NDArray& grids = maps[static_cast<std::size_t>(kind)];  // [1, h, w]
      const NDArray grid = grids.reshape({grids.size(1), grids.size(2)});
      const NDArray upsampled = interpret::upsample_map(grid, size);
      row.push_back(
          viz::map_panel(image, upsampled, boxes, kZoom, fmt::format("{} {}", tag, noun)));
      const bool hit = interpret::pointing_hit(interpret::map_maximum(upsampled), boxes, tolerance);
      e.maps.push_back({.method = tag,
                        .values = viz::map_rows(grid),
                        .scores = {{"pointing game hit", hit ? 1.0 : 0.0}}});
    }
  }
  return row;
}

}  // namespace

void section_figures(app::Transcript& t, const Options& o, CamClassifier& model,
                     const CanvasData& d) {
  t.heading("7. The maps over the canvases");
  const Index count = std::min<Index>(o.figures, d.test.size());
  if (count == 0) {
    t.say("--figures 0: no figure.\n");
    return;
  }
  Generator gen(o.seed);
  std::vector<std::vector<viz::Panel>> rows;
  viz::AttentionRun run{
      .lesson = "08_cnn_cam",
      .title = "CAM and Grad-CAM (8x8 and 16x16) of each class on the first test canvases",
      .kind = "image",
      .seed = o.seed,
      .flags = fmt::format("--figures {} --tolerance {}", o.figures, o.tolerance)};
  for (Index i = 0; i < count; ++i) rows.push_back(figure_row(model, d, i, gen, o.tolerance, run));
  viz::write_panels(
      o.out + "/maps.png", rows,
      {.scale_note = "each map on its own scale: black its lowest value, pale yellow its highest"});
  t.say("Wrote {}/maps.png: the first {} test canvases, each followed by the CAM, Grad-CAM\n",
        o.out, count);
  t.say("on the 8x8 grid (GC8) and on the 16x16 grid (GC16) of each class on it; the class's\n");
  t.say("boxes in cyan, the map's largest pixel marked with a white cross.\n");
  t.say("Wrote {}/attention.json (these maps and their scores); to explore it, open {}.\n", o.out,
        viz::write_attention_run(o.out, run).string());
}

}  // namespace attend::lesson08
