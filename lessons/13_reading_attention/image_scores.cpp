// (c) Every map scored three ways.
//   Against the boxes (interpret/pointing.h): the pointing game (is the map's largest pixel on
//   the class's object?) and the share of the map's mass inside the class's boxes.
//   Against the model (interpret/faithfulness.h, Petsiuk et al. 2018): delete the patches the
//   map ranks first and watch the class probability fall (a low area is good), or insert them
//   into a blank canvas and watch it rise (a high area is good). "Removed" means every pixel
//   of the 8x8 patch set to the mean pixel of the training canvases, which the ViT's
//   standardisation maps to 0: the patch embedding then sees nothing but its bias.
#include <algorithm>
#include <cmath>
#include <map>

#include "images.h"

namespace attend::lesson13 {

std::vector<double> patch_relevance(const NDArray& map, Index grid) {
  if (map.ndim() != 2 || grid < 1 || map.size(0) % grid != 0 || map.size(1) % grid != 0)
    fail("patch_relevance: the map {} must be a multiple of the {}x{} patch grid", map.shape(),
         grid, grid);
  const Index height = map.size(0), width = map.size(1);
  const Index cell_h = height / grid, cell_w = width / grid;
  const std::vector<double> values = map.to_vector();
  std::vector<double> relevance(static_cast<std::size_t>(grid * grid), 0.0);
  for (Index y = 0; y < height; ++y)
    for (Index x = 0; x < width; ++x)
      relevance[static_cast<std::size_t>((y / cell_h) * grid + x / cell_w)] +=
          values[static_cast<std::size_t>(y * width + x)];
  return relevance;
}

NDArray keep_patches(const NDArray& image, const std::vector<bool>& kept, Index grid, double fill) {
  if (image.ndim() != 3 || static_cast<Index>(kept.size()) != grid * grid ||
      image.size(1) % grid != 0 || image.size(2) % grid != 0)
    fail("keep_patches: image {} and {} flags for a {}x{} grid do not fit", image.shape(),
         kept.size(), grid, grid);
  NDArray out = image.to(kFloat32).clone();
  const Index channels = image.size(0), height = image.size(1), width = image.size(2);
  const Index cell_h = height / grid, cell_w = width / grid;
  float* pixels = out.data<float>();
  for (Index c = 0; c < channels; ++c)
    for (Index y = 0; y < height; ++y)
      for (Index x = 0; x < width; ++x)
        if (!kept[static_cast<std::size_t>((y / cell_h) * grid + x / cell_w)])
          pixels[(c * height + y) * width + x] = static_cast<float>(fill);
  return out;
}

namespace {

constexpr Index kMaskBatch = 100;  // masked images per forward pass

// The curves ask for the model's score one keep-mask at a time. Asking the model each time
// would cost one forward pass per mask; instead a first pass records the masks (answering 0),
// one batched forward scores the distinct ones, and a second pass replays the answers in the
// same order. deletion_curve and insertion_curve run unchanged.
class MaskScores {
 public:
  interpret::KeepMaskScore recorder() {
    return [this](const std::vector<bool>& kept) {
      const auto [where, added] = index_.try_emplace(kept, static_cast<Index>(masks_.size()));
      if (added) masks_.push_back(kept);
      order_.push_back(where->second);
      return 0.0;
    };
  }
  // sigmoid(logit[label]) of `model` for the image with each recorded mask.
  void evaluate(nn::UnaryModule& model, const NDArray& image, Index label, Index grid,
                double fill) {
    NoGradGuard no_graph;
    for (std::size_t start = 0; start < masks_.size(); start += kMaskBatch) {
      std::vector<NDArray> images;
      for (std::size_t m = start; m < std::min(masks_.size(), start + kMaskBatch); ++m)
        images.push_back(keep_patches(image, masks_[m], grid, fill));
      const NDArray logits = model(Tensor(stack(images, 0))).data();
      for (Index i = 0; i < logits.size(0); ++i)
        scores_.push_back(1 / (1 + std::exp(-logits.at({i, label}))));
    }
  }
  interpret::KeepMaskScore replayer() {
    next_ = 0;
    return [this](const std::vector<bool>&) {
      return scores_.at(static_cast<std::size_t>(order_.at(next_++)));
    };
  }

 private:
  std::map<std::vector<bool>, Index> index_;
  std::vector<std::vector<bool>> masks_;
  std::vector<Index> order_;
  std::vector<double> scores_;
  std::size_t next_ = 0;
};

void add_curve(std::vector<double>& sum, const interpret::PerturbationCurve& curve) {
  sum.resize(curve.score.size(), 0.0);
  for (std::size_t i = 0; i < curve.score.size(); ++i) sum[i] += curve.score[i];
}

// The deletion and insertion curves of every method's map of one pair: the CNN's rows with
// the CNN's probability, the others with the ViT's.
void score_curves(ImageScores& s, const std::vector<std::vector<double>>& relevance,
                  const NDArray& image, Index label, CanvasVit& vit, vision::CamClassifier& cnn,
                  Index steps) {
  std::vector<std::vector<double>> vit_rows = relevance, cnn_rows(relevance.size());
  for (std::size_t row = 0; row < relevance.size(); ++row)
    if (uses_cnn(static_cast<Index>(row))) std::swap(vit_rows[row], cnn_rows[row]);
  const Index grid = vit.vit.grid();
  const std::vector<CurvePair> by_vit =
      perturbation_curves(vit, image, label, vit_rows, grid, s.fill, steps);
  const std::vector<CurvePair> by_cnn =
      perturbation_curves(cnn, image, label, cnn_rows, grid, s.fill, steps);
  for (std::size_t row = 0; row < relevance.size(); ++row) {
    if (relevance[row].empty()) continue;
    const CurvePair& curves = uses_cnn(static_cast<Index>(row)) ? by_cnn[row] : by_vit[row];
    MethodScore& method = s.methods[row];
    method.deletion += curves.deletion.auc;
    method.insertion += curves.insertion.auc;
    ++method.curves;
    add_curve(method.deletion_curve, curves.deletion);
    add_curve(method.insertion_curve, curves.insertion);
  }
}

// Pointing game and mass for every method's map of pair p (image b of the batch), then the
// curves if p is among the first curve_pairs.
void score_pair(ImageScores& s, Index p, const MapBatch& maps, Index b, const NDArray& image,
                const vision::CanvasSet& set, CanvasVit& vit, vision::CamClassifier& cnn,
                const ScoreOptions& o) {
  const vision::ClassOnCanvas pair = s.pairs[static_cast<std::size_t>(p)];
  const Index size = set.images.size(-1);
  const auto boxes =
      vision::boxes_of_class(set.objects[static_cast<std::size_t>(pair.canvas)], pair.label);
  s.random_expected.record(pair.label, interpret::hit_area_share(boxes, size, o.tolerance),
                           interpret::hit_area_share(boxes, size, 0));
  const bool curves = p < o.curve_pairs;
  std::vector<std::vector<double>> relevance(maps.maps.size());
  for (std::size_t row = 0; row < maps.maps.size(); ++row) {
    if (!maps.maps[row].defined() || (row == kFlow && pair.canvas >= o.flow_canvases)) continue;
    const NDArray map = map_of(maps.maps[row], b);
    const BoxScore score = box_score(map, boxes, size, o.tolerance);
    s.methods[row].pointing.record(pair.label, score.hit ? 1 : 0, score.mass);
    ++s.methods[row].pairs;
    if (curves) relevance[row] = patch_relevance(map, vit.vit.grid());
  }
  if (curves) score_curves(s, relevance, image, pair.label, vit, cnn, o.curve_steps);
}

// The flow map of a pair on the same canvas as the pair before it, copied from that pair.
void copy_repeated_flow(MapBatch& maps, const std::vector<std::int64_t>& canvases) {
  NDArray& flow = maps.maps[kFlow];
  if (!flow.defined()) return;
  const Index cells = flow.size(1) * flow.size(2);
  double* values = flow.data<double>();
  for (std::size_t b = 1; b < canvases.size(); ++b)
    if (canvases[b] == canvases[b - 1])
      std::copy_n(values + (b - 1) * cells, cells, values + b * cells);
}

void average_curves(ImageScores& s) {
  for (MethodScore& m : s.methods) {
    if (m.curves == 0) continue;
    const double n = static_cast<double>(m.curves);
    m.deletion /= n;
    m.insertion /= n;
    for (double& v : m.deletion_curve) v /= n;
    for (double& v : m.insertion_curve) v /= n;
  }
}

}  // namespace

BoxScore box_score(const NDArray& map, const std::vector<data::Box>& boxes, Index size,
                   double tolerance) {
  const NDArray pixels = map.size(0) == size ? map : interpret::upsample_map(map, size);
  return {.hit = interpret::pointing_hit(interpret::map_maximum(pixels), boxes, tolerance),
          .mass = interpret::mass_inside_boxes(interpret::non_negative_map(pixels), boxes)};
}

std::vector<CurvePair> perturbation_curves(nn::UnaryModule& model, const NDArray& image,
                                           Index label,
                                           const std::vector<std::vector<double>>& relevance,
                                           Index grid, double fill, Index steps) {
  MaskScores scores;
  for (const std::vector<double>& r : relevance) {
    if (r.empty()) continue;
    interpret::deletion_curve(r, scores.recorder(), steps);
    interpret::insertion_curve(r, scores.recorder(), steps);
  }
  scores.evaluate(model, image, label, grid, fill);
  std::vector<CurvePair> curves(relevance.size());
  const interpret::KeepMaskScore replay = scores.replayer();
  for (std::size_t row = 0; row < relevance.size(); ++row) {
    if (relevance[row].empty()) continue;
    curves[row].deletion = interpret::deletion_curve(relevance[row], replay, steps);
    curves[row].insertion = interpret::insertion_curve(relevance[row], replay, steps);
  }
  return curves;
}

ImageScores score_methods(CanvasVit& vit, vision::CamClassifier& cnn, const vision::CanvasSet& set,
                          const ScoreOptions& o) {
  if (o.batch < 1) fail("score_methods: the batch must be at least 1, got {}", o.batch);
  const Index classes = set.labels.size(1), heads = vit.vit.config().num_heads;
  ImageScores s;
  s.pairs = vision::classes_on_canvases(set);
  s.methods.assign(static_cast<std::size_t>(method_count(heads)),
                   MethodScore{interpret::PointingTally(classes)});
  s.random_expected = interpret::PointingTally(classes);
  s.fill = vit.pixels.mean;
  vit.eval();
  cnn.eval();
  Generator gen(o.seed);
  const auto count = static_cast<Index>(s.pairs.size());
  for (Index start = 0; start < count; start += o.batch) {
    const Index stop = std::min(count, start + o.batch);
    std::vector<std::int64_t> canvases;
    std::vector<Index> labels;
    std::vector<bool> flow;
    for (Index p = start; p < stop; ++p) {
      const vision::ClassOnCanvas& pair = s.pairs[static_cast<std::size_t>(p)];
      // Flow depends on the attention only, not on the class: once per canvas.
      const bool repeated = !canvases.empty() && canvases.back() == pair.canvas;
      canvases.push_back(pair.canvas);
      labels.push_back(pair.label);
      flow.push_back(pair.canvas < o.flow_canvases && !repeated);
    }
    const NDArray images =
        index_select(set.images, 0, NDArray::from_vector(canvases, {stop - start}));
    MapBatch maps = model_maps(vit, cnn, images, labels, flow);
    copy_repeated_flow(maps, canvases);
    add_baseline_maps(maps, images, gen);
    for (Index p = start; p < stop; ++p)
      score_pair(s, p, maps, p - start, squeeze(slice(images, 0, p - start, p - start + 1), 0), set,
                 vit, cnn, o);
  }
  average_curves(s);
  return s;
}

}  // namespace attend::lesson13
