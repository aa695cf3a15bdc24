// (c) Adversarial erasing (Wei et al. 2017). A classifier that found one discriminative region
// is shown the canvases without it and has to find another:
//   1. train a classifier on the canvases I_t (I_1: the plain ones)
//   2. compute its map of every class on every training canvas
//   3. the pixels where a scaled map reaches the threshold: its most attended region F_t
//   4. erase F_t (the mean pixel of the training canvases) -> I_{t+1}, and go to 1
// The union F_1 u F_2 u ... is what the steps mined together. On the cue canvases step 1 mines
// the band (the shortcut), so the classifier of step 2 has to find the trouser.
#include <algorithm>

#include "lesson.h"

namespace attend::lesson14 {
namespace {

// Maps computed per this many (canvas, class) pairs.
constexpr Index kMapBatch = 100;

}  // namespace

std::vector<double> mean_pixel(const NDArray& images) {
  if (images.ndim() != 4 || images.size(0) < 1)
    fail("mean_pixel: expects images [N, C, H, W], got {}", images.shape());
  std::vector<double> fill;
  for (Index c = 0; c < images.size(1); ++c)
    fill.push_back(mean(slice(images, 1, c, c + 1)).item());
  return fill;
}

double erase_attended(CamClassifier& model, CueSet& train, double threshold,
                      const std::vector<double>& fill) {
  model.eval();
  CanvasSet& set = train.set;
  const ClassPairs pairs = class_pairs(set.labels);
  const Index side = set.images.size(2);
  // regions[i]: the union over canvas i's classes of their attended regions.
  NDArray regions = NDArray::zeros({set.size(), side, side}, kFloat32);
  float* r = regions.data<float>();
  for (std::size_t start = 0; start < pairs.canvas.size(); start += kMapBatch) {
    const std::size_t stop = std::min(pairs.canvas.size(), start + kMapBatch);
    const std::vector<std::int64_t> canvases(pairs.canvas.begin() + start,
                                             pairs.canvas.begin() + stop);
    const NDArray images = index_select(
        set.images, 0, NDArray::from_vector(canvases, {static_cast<Index>(canvases.size())}));
    const std::vector<Index> labels(pairs.label.begin() + start, pairs.label.begin() + stop);
    const NDArray attended =
        interpret::attended_regions(class_maps(model, images, labels), threshold);
    const float* a = attended.data<float>();
    for (std::size_t p = 0; p < canvases.size(); ++p)
      for (Index k = 0; k < side * side; ++k)
        r[canvases[p] * side * side + k] =
            std::max(r[canvases[p] * side * side + k], a[p * side * side + k]);
  }
  set.images = interpret::erase_regions(set.images, regions, fill);
  return mean(regions).item();
}

}  // namespace attend::lesson14
