// (f) continued: every map of every (held-out canvas, present class) pair, scored by the
// pointing game and by the mass inside the boxes, next to baselines that never look at the
// model: the canvas's own brightness, the centre, and random values.
#include <algorithm>
#include <cmath>

#include "lesson.h"

namespace attend::lesson08 {
namespace {

// The brightness baseline is averaged over cells of this many pixels: the CAM's resolution.
constexpr Index kBrightnessCell = 8;

// exp(-d^2 / (2 sigma^2)) around pixel (S/2, S/2), sigma = S * this: largest at the centre.
constexpr double kCentreWidth = 0.25;

NDArray brightness_maps(const NDArray& images) {
  NoGradGuard no_graph;
  const NDArray grey = mean(images, 1, /*keepdim=*/true);  // [B, 1, S, S]
  const NDArray cells = nn::avg_pool2d(Tensor(grey), kBrightnessCell).data();
  return cells.reshape({images.size(0), cells.size(2), cells.size(3)}).to(kFloat64);
}

NDArray centre_maps(Index batch, Index size) {
  NDArray maps = NDArray::empty({batch, size, size}, kFloat64);
  double* m = maps.data<double>();
  const double centre = static_cast<double>(size / 2),
               sigma = kCentreWidth * static_cast<double>(size);
  for (Index b = 0; b < batch; ++b)
    for (Index y = 0; y < size; ++y)
      for (Index x = 0; x < size; ++x) {
        const double dx = static_cast<double>(x) - centre, dy = static_cast<double>(y) - centre;
        m[(b * size + y) * size + x] = std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma));
      }
  return maps;
}

// Map b of a batch [B, h, w], upsampled to size x size.
NDArray map_at(const NDArray& maps, Index b, Index size) {
  const NDArray grid = slice(maps, 0, b, b + 1).reshape({maps.size(1), maps.size(2)});
  return grid.size(0) == size && grid.size(1) == size ? grid.to(kFloat64)
                                                      : interpret::upsample_map(grid, size);
}

}  // namespace

const char* map_kind_name(int kind) {
  static const char* const names[kMapKinds] = {"CAM, 8x8 grid",
                                               "Grad-CAM, 8x8 grid (block 3)",
                                               "Grad-CAM, 16x16 (block 2)",
                                               "brightness of the canvas",
                                               "centre of the canvas",
                                               "uniform random map"};
  if (kind < 0 || kind >= kMapKinds) fail("map_kind_name: no map kind {}", kind);
  return names[kind];
}

std::vector<NDArray> explanation_maps(CamClassifier& model, const NDArray& images,
                                      const std::vector<Index>& classes, Generator& gen) {
  const Index batch = images.size(0), size = images.size(-1);
  std::vector<NDArray> maps(kMapKinds);
  const GradCam last = grad_cam(model, images, classes, 3);
  maps[kCam] =
      interpret::class_activation_maps(last.features, model.classifier.weight.data(), classes);
  maps[kGradCam8] = last.maps;
  maps[kGradCam16] = grad_cam(model, images, classes, 2).maps;
  maps[kBrightness] = brightness_maps(images);
  maps[kCentre] = centre_maps(batch, size);
  maps[kRandom] = NDArray::uniform({batch, size, size}, gen, 0, 1, kFloat64);
  return maps;
}

namespace {

// Z * Grad-CAM against ReLU(CAM) on the 8x8 grids of one batch: equal for this head (cam.cpp).
void compare_cam_and_grad_cam(const std::vector<NDArray>& maps, PointingResults& results) {
  const double cells = static_cast<double>(maps[kCam].size(1) * maps[kCam].size(2));
  const std::vector<double> cam = maps[kCam].to_vector(), grad = maps[kGradCam8].to_vector();
  double largest_cam = 0, largest_gap = 0;
  for (std::size_t i = 0; i < cam.size(); ++i) {
    largest_cam = std::max(largest_cam, std::abs(cam[i]));
    largest_gap = std::max(largest_gap, std::abs(cells * grad[i] - std::max(cam[i], 0.0)));
  }
  if (largest_cam > 0)
    results.identity_gap = std::max(results.identity_gap, largest_gap / largest_cam);
}

// Scores every kind of map of one pair (image b of the batch `maps`), and the random
// baseline's expectation.
void score_pair(const ClassOnCanvas& pair, const std::vector<NDArray>& maps, Index b,
                const CanvasSet& set, double tolerance, PointingResults& results) {
  const Index size = set.images.size(-1);
  const std::vector<data::Box> boxes =
      boxes_of_class(set.objects[static_cast<std::size_t>(pair.canvas)], pair.label);
  const double expected = interpret::hit_area_share(boxes, size, tolerance),
               area = interpret::hit_area_share(boxes, size, 0);
  results.random_expected.push_back(expected);
  results.expected_all.record(pair.label, expected, area);
  if (pair.distractor) results.expected_with_distractor.record(pair.label, expected, area);

  std::vector<double> hits;
  std::vector<interpret::Pixel> points;
  for (int kind = 0; kind < kMapKinds; ++kind) {
    const NDArray map = map_at(maps[static_cast<std::size_t>(kind)], b, size);
    points.push_back(interpret::map_maximum(map));
    hits.push_back(interpret::pointing_hit(points.back(), boxes, tolerance) ? 1 : 0);
    const double mass = interpret::mass_inside_boxes(interpret::non_negative_map(map), boxes);
    results.all[static_cast<std::size_t>(kind)].record(pair.label, hits.back(), mass);
    if (pair.distractor)
      results.with_distractor[static_cast<std::size_t>(kind)].record(pair.label, hits.back(), mass);
  }
  results.hits.push_back(hits);

  // Where do the two 8x8 maps peak? Grad-CAM is 0 everywhere when the CAM has no positive
  // cell; otherwise the ReLU can only move the upsampled peak next to a negative cell.
  const interpret::Pixel cam = points[kCam], grad_cam = points[kGradCam8];
  results.same_point += cam.x == grad_cam.x && cam.y == grad_cam.y;
  if (max(slice(maps[kCam], 0, b, b + 1)).item() <= 0) {
    ++results.no_positive_cam;
    return;
  }
  const double dx = static_cast<double>(cam.x - grad_cam.x),
               dy = static_cast<double>(cam.y - grad_cam.y);
  results.largest_shift = std::max(results.largest_shift, std::sqrt(dx * dx + dy * dy));
}

}  // namespace

PointingResults play_pointing_game(CamClassifier& model, const CanvasSet& set,
                                   const PointingOptions& options) {
  if (!(options.tolerance >= 0))
    fail("play_pointing_game: the tolerance must be >= 0, got {}", options.tolerance);
  if (options.batch < 1)
    fail("play_pointing_game: the batch must be at least 1, got {}", options.batch);
  const Index classes = set.labels.size(1);
  PointingResults results;
  results.pairs = classes_on_canvases(set);
  results.all.assign(kMapKinds, interpret::PointingTally(classes));
  results.with_distractor.assign(kMapKinds, interpret::PointingTally(classes));
  results.expected_all = interpret::PointingTally(classes);
  results.expected_with_distractor = interpret::PointingTally(classes);
  Generator gen(options.seed);
  const auto count = static_cast<Index>(results.pairs.size());
  for (Index start = 0; start < count; start += options.batch) {
    const Index stop = std::min(count, start + options.batch);
    std::vector<std::int64_t> canvases;
    std::vector<Index> labels;
    for (Index p = start; p < stop; ++p) {
      canvases.push_back(results.pairs[static_cast<std::size_t>(p)].canvas);
      labels.push_back(results.pairs[static_cast<std::size_t>(p)].label);
    }
    const NDArray images =
        index_select(set.images, 0, NDArray::from_vector(canvases, {stop - start}));
    const std::vector<NDArray> maps = explanation_maps(model, images, labels, gen);
    compare_cam_and_grad_cam(maps, results);
    for (Index p = start; p < stop; ++p)
      score_pair(results.pairs[static_cast<std::size_t>(p)], maps, p - start, set,
                 options.tolerance, results);
  }
  return results;
}

}  // namespace attend::lesson08
