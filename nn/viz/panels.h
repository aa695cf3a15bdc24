// Figures of maps over images: panels (an image magnified, its boxes outlined, a map overlaid
// in inferno colours with a cross at its largest pixel), laid out in rows with a caption under
// each and a colour scale under them all. Lessons 08 and 13 draw their CAM, attention and
// saliency maps this way: a pointing-game hit is a cross inside (or near) an outlined box.
//
//   std::vector<std::vector<viz::Panel>> rows = {
//       {viz::image_panel(canvas, boxes, 2, "canvas"),
//        viz::map_panel(canvas, cam, class_boxes, 2, "CAM: bag")}};
//   viz::write_panels("out/maps.png", rows, "each map scaled to its own maximum");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nn/data/canvas.h"
#include "tensor/ndarray.h"

namespace attend::viz {

// One picture of a figure and the caption printed under it.
struct Panel {
  NDArray picture;  // float32 [3, H, W]
  std::string caption;
};

// Each pixel repeated zoom x zoom times (crisp, unlike a bilinear enlargement): image
// [3, H, W] -> [3, zoom H, zoom W], float32.
NDArray magnify(const NDArray& image, Index zoom);

// The outline of a box (in the unmagnified image's pixels, x1 and y1 excluded) drawn into a
// picture magnified `zoom` times, cyan (a colour that is not one of the canvas tints).
void outline_box(NDArray& picture, const data::Box& box, Index zoom);

// Where a map [h, w] is largest, {column, row} (the first such pixel in row-major order).
struct MapPeak {
  Index x = 0, y = 0;
};
MapPeak map_peak(const NDArray& map);

// The image [3, S, S] magnified, with the boxes outlined.
Panel image_panel(const NDArray& image, const std::vector<data::Box>& boxes, Index zoom,
                  const std::string& caption);

// A canvas (nn/data/canvas.h) magnified, every object's box outlined.
Panel canvas_panel(const NDArray& image, const std::vector<data::CanvasObject>& objects, Index zoom,
                   const std::string& caption);

// The map over the image: the map [S, S] (at the image's size, upsampled by the caller the way
// it is scored, so that the cross marks the point that was scored; shifted to a minimum of 0
// and scaled to a maximum of 1) blended over the magnified image (attention_overlay), the
// boxes outlined and the map's largest pixel marked with a white cross on a black outline.
Panel map_panel(const NDArray& image, const NDArray& map, const std::vector<data::Box>& boxes,
                Index zoom, const std::string& caption);

// Rows of panels (rows may differ in length; every panel the same size) written as one PNG,
// the captions under the panels, cut with ".." to the panel's width. With a row_labels
// entry for a row, that text is printed left of the row, in a column as wide as the longest
// label. With a scale_note, the inferno colour bar of the overlays ("lowest" to "highest")
// goes under the panels with the note under it: what the colours mean.
struct PanelLayout {
  std::vector<std::string> row_labels = {};
  std::string scale_note = {};
};
void write_panels(const std::filesystem::path& png, const std::vector<std::vector<Panel>>& rows,
                  const PanelLayout& layout = {});

}  // namespace attend::viz
