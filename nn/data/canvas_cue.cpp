#include "nn/data/canvas_cue.h"

#include <algorithm>

#include "tensor/error.h"

namespace attend::data {
namespace {

// The span [low, high) that the items' boxes cover across the layout axis: rows for a row of
// items, columns for a column.
std::pair<Index, Index> occupied_span(const std::vector<CanvasObject>& objects, bool horizontal) {
  Index low = 0, high = 0;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const Box& b = objects[i].box;
    const Index a = horizontal ? b.y0 : b.x0, z = horizontal ? b.y1 : b.x1;
    low = i == 0 ? a : std::min(low, a);
    high = i == 0 ? z : std::max(high, z);
  }
  return {low, high};
}

// Light adds: each channel of the band's pixels becomes the larger of the canvas's value and
// the band's colour, so the band lies behind the items. (Only an item's faint fringe, below the
// ink threshold and outside its box, can reach into the band.)
void paint_band(CanvasExample& example, const CanvasCue& cue) {
  const Index side = example.image.size(2);
  float* canvas = example.image.data<float>();
  const Box& b = example.cue_box;
  for (Index c = 0; c < 3; ++c)
    for (Index y = b.y0; y < b.y1; ++y)
      for (Index x = b.x0; x < b.x1; ++x) {
        float& v = canvas[(c * side + y) * side + x];
        v = std::max(v, cue.color[static_cast<std::size_t>(c)]);
      }
}

}  // namespace

void add_cue(CanvasExample& example, const CanvasCue& cue, bool horizontal, Generator& gen) {
  if (cue.label < 0) fail("add_cue: the cue has no class (label {})", cue.label);
  const Index side = example.image.size(2);
  bool with_class = false;
  for (const CanvasObject& o : example.objects) with_class = with_class || o.label == cue.label;
  // Two draws, whatever they decide: canvases drawn with other probabilities stay in step.
  const double u = gen.uniform();
  const auto [low, high] = occupied_span(example.objects, horizontal);
  // Band starts that fit before the items, then after them.
  const Index before = std::max<Index>(0, low - kCueGap - cue.thickness + 1);
  const Index after = std::max<Index>(0, side - cue.thickness - (high + kCueGap) + 1);
  if (before + after == 0)
    fail("add_cue: no room for a {}-pixel band beside items spanning {}..{} of {} pixels",
         cue.thickness, low, high, side);
  const Index r = gen.randint(before + after);
  example.has_cue = u < (with_class ? cue.p_with : cue.p_without);
  if (!example.has_cue) return;
  const Index start = r < before ? r : high + kCueGap + (r - before);
  example.cue_box = horizontal ? Box{0, start, side, start + cue.thickness}
                               : Box{start, 0, start + cue.thickness, side};
  paint_band(example, cue);
}

void check_cue(const CanvasOptions& options, Index across_extent) {
  const CanvasCue& cue = options.cue;
  if (cue.label < 0) return;
  if (std::find(options.classes.begin(), options.classes.end(), cue.label) == options.classes.end())
    fail("CanvasGenerator: the cue's class {} is not one of the canvases' classes", cue.label);
  if (!(cue.p_with >= 0 && cue.p_with <= 1 && cue.p_without >= 0 && cue.p_without <= 1))
    fail("CanvasGenerator: the cue's probabilities must lie in [0, 1], got {} and {}", cue.p_with,
         cue.p_without);
  // The items leave at least half of what they do not cover on one side.
  const Index free = (options.size - across_extent) / 2;
  if (cue.thickness < 1 || cue.thickness + kCueGap > free)
    fail("CanvasGenerator: a {}-pixel cue band does not fit beside the items ({} pixels free)",
         cue.thickness, free);
}

CanvasCue aligned_cue(CanvasCue cue) {
  cue.p_with = 1;
  cue.p_without = 0;
  return cue;
}

CanvasCue conflicting_cue(CanvasCue cue) {
  cue.p_with = 0;
  cue.p_without = 1;
  return cue;
}

CanvasCue independent_cue(CanvasCue cue) {
  cue.p_with = cue.p_without = 0.5;
  return cue;
}

CueSplits make_cue_splits(const CanvasGenerator& train_items, const CanvasGenerator& held_out_items,
                          const CanvasOptions& options, const CueSplitSizes& sizes,
                          std::uint64_t seed) {
  if (options.cue.label < 0) fail("make_cue_splits: the options have no cue (label -1)");
  auto draw = [](const CanvasGenerator& g, std::size_t n, std::uint64_t s) {
    Generator gen(s);
    std::vector<CanvasExample> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(g.make(gen));
    return out;
  };
  auto with_cue = [&](const CanvasCue& cue) {
    CanvasOptions o = options;
    o.cue = cue;
    return CanvasGenerator(held_out_items, o);
  };
  CueSplits splits;
  splits.train = draw(CanvasGenerator(train_items, options), sizes.train, seed);
  splits.validation = draw(with_cue(options.cue), sizes.validation, seed + 1);
  // One seed for the three test sets: the same canvases, with three rules for the band.
  splits.aligned = draw(with_cue(aligned_cue(options.cue)), sizes.test, seed + 2);
  splits.conflicting = draw(with_cue(conflicting_cue(options.cue)), sizes.test, seed + 2);
  splits.independent = draw(with_cue(independent_cue(options.cue)), sizes.test, seed + 2);
  return splits;
}

CueSplits make_cue_splits(const LabelledImages& train_items, const LabelledImages& held_out_items,
                          const CanvasOptions& options, const CueSplitSizes& sizes,
                          std::uint64_t seed) {
  return make_cue_splits(CanvasGenerator(train_items, options),
                         CanvasGenerator(held_out_items, options), options, sizes, seed);
}

}  // namespace attend::data
