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

std::vector<double> mean_pixel(const NDArray& images) {
  if (images.ndim() != 4 || images.size(0) < 1)
    fail("mean_pixel: expects images [N, C, H, W], got {}", images.shape());
  std::vector<double> fill;
  for (Index c = 0; c < images.size(1); ++c)
    fill.push_back(mean(slice(images, 1, c, c + 1)).item());
  return fill;
}

namespace {

// The union over each canvas's classes of the regions their scaled maps attend:
// images [B, C, S, S] and labels [B, classes] -> float32 [B, S, S], 1 where erased.
NDArray attended_union(CamClassifier& model, const NDArray& images, const NDArray& labels,
                       double threshold) {
  const ClassPairs pairs = class_pairs(labels);
  const Index side = images.size(2), pixels = side * side;
  // The encoder runs once per canvas, whatever the number of its classes.
  const NDArray attended =
      interpret::attended_regions(class_maps(model, images, pairs.canvas, pairs.label), threshold);
  NDArray regions = NDArray::zeros({images.size(0), side, side}, kFloat32);
  float* r = regions.data<float>();
  const float* a = attended.data<float>();
  for (std::size_t p = 0; p < pairs.canvas.size(); ++p)
    for (Index k = 0; k < pixels; ++k) {
      float& v = r[pairs.canvas[p] * pixels + k];
      v = std::max(v, a[static_cast<Index>(p) * pixels + k]);
    }
  return regions;
}

}  // namespace

double erase_attended(CamClassifier& model, CueSet& train, double threshold,
                      const std::vector<double>& fill) {
  model.eval();
  CanvasSet& set = train.set;
  if (set.images.dtype() != kFloat32)
    fail("erase_attended: expects float32 canvases, got {}", dtype_name(set.images.dtype()));
  // A batch of canvases at a time, written over the set's own pixels: nothing of the size of
  // the whole set is made (arrays share their memory, so whoever shares this one sees the
  // erasures too; clone it first to keep the plain canvases).
  float* pixels = set.images.data<float>();
  const Index per_canvas = set.images.numel() / set.size();
  double erased_pixels = 0;
  for (Index start = 0; start < set.size(); start += kEvalBatch) {
    const Index stop = std::min(set.size(), start + kEvalBatch);
    const NDArray images = slice(set.images, 0, start, stop);
    const NDArray regions =
        attended_union(model, images, slice(set.labels, 0, start, stop), threshold);
    const NDArray part = interpret::erase_regions(images, regions, fill);
    std::copy_n(part.data<float>(), part.numel(), pixels + start * per_canvas);
    erased_pixels += sum(regions).item();
  }
  return erased_pixels / static_cast<double>(set.size() * set.images.size(2) * set.images.size(3));
}

}  // namespace attend::lesson14
