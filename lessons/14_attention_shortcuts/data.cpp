// (a) The data: lesson 08's canvases of 1-3 items (here of five classes), with a background
// cue. On the training canvases a tinted band is painted beside the items of 95% of the
// canvases that hold a trouser and of 2% of the others (nn/data/canvas_cue.h): the band
// predicts "trouser" almost as well as the trouser does, and is far easier to see. The test
// canvases are drawn once and given the band by three rules (aligned: exactly when the class
// is there; conflicting: exactly when it is not; independent: at random).
#include "lesson.h"

namespace attend::lesson14 {
namespace {

constexpr Index kClasses = 10;  // labels are Fashion-MNIST's 0..9, five of them used
// Pictures of the generated stand-in: enough for every split to draw from.
constexpr Index kSyntheticTrainItems = 6000, kSyntheticTestItems = 2000;

// Stacks the canvases into a set and frees them: the images are never held twice for long.
CueSet to_cue_set(std::vector<data::CanvasExample>&& examples) {
  CueSet s;
  s.set = vision::to_canvas_set(examples, kClasses);
  for (const data::CanvasExample& e : examples) {
    s.has_cue.push_back(e.has_cue);
    s.cue_box.push_back(e.cue_box);
  }
  std::vector<data::CanvasExample>().swap(examples);
  return s;
}

// Fashion-MNIST's pictures of one split, or the generated stand-in's.
data::LabelledImages load_items(const DataOptions& options, data::Split split) {
  if (options.synthetic)
    return data::synthetic_fashion_mnist(
        split, split == data::Split::kTrain ? kSyntheticTrainItems : kSyntheticTestItems,
        options.seed);
  return data::load_fashion_mnist(split, options.folder);
}

// The splits of `sizes`, drawn from the pictures of one split. The generator keeps
// Fashion-MNIST's pictures as bytes (nn/data/picture_store.h; 47 MB for the training split):
// their float32 array (188 MB) goes back to the system before any canvas is made, the bytes
// once the canvases are made, before they are stacked into sets.
data::CueSplits draw_splits(const DataOptions& options, data::Split split,
                            const data::CanvasOptions& canvas, const data::CueSplitSizes& sizes,
                            std::vector<std::string>& class_names) {
  data::CueSplits splits;
  {
    data::LabelledImages items = load_items(options, split);
    class_names = items.class_names;
    const data::CanvasGenerator pictures(std::move(items), canvas);
    memory::empty_cache();  // the float32 pictures, freed by the generator
    splits = data::make_cue_splits(pictures, pictures, canvas, sizes, options.seed);
  }
  memory::empty_cache();  // what drawing the canvases cached: sizes that do not come again
  return splits;
}

}  // namespace

ShortcutData make_shortcut_data(const DataOptions& options) {
  if (options.train < 1 || options.validation < 1 || options.test < 1)
    fail("make_shortcut_data: every split needs at least one canvas, got {} / {} / {}",
         options.train, options.validation, options.test);
  if (!(options.box_share >= 0 && options.box_share <= 1))
    fail("make_shortcut_data: box_share must lie in [0, 1], got {}", options.box_share);
  data::CanvasOptions canvas;
  canvas.classes = kShortcutClasses;
  canvas.cue = options.cue;
  // One source of pictures at a time, each freed before its canvases are stacked into sets:
  // make_cue_splits draws every split from a generator of its own seed, so the training split
  // made alone and the held-out splits made alone are the canvases of one call.
  ShortcutData d;
  d.cue_class = options.cue.label;
  data::CueSplits splits =
      draw_splits(options, data::Split::kTrain, canvas,
                  {.train = static_cast<std::size_t>(options.train)}, d.class_names);
  d.train = to_cue_set(std::move(splits.train));
  splits = draw_splits(options, data::Split::kTest, canvas,
                       {.validation = static_cast<std::size_t>(options.validation),
                        .test = static_cast<std::size_t>(options.test)},
                       d.class_names);
  d.validation = to_cue_set(std::move(splits.validation));
  d.aligned = to_cue_set(std::move(splits.aligned));
  d.conflicting = to_cue_set(std::move(splits.conflicting));
  d.independent = to_cue_set(std::move(splits.independent));
  memory::empty_cache();
  // The canvases whose boxes GAIN_ext sees: a fixed random share, drawn by their own
  // generator so that the canvases themselves do not depend on it.
  Generator pick(options.seed + 3);
  for (Index i = 0; i < d.train.set.size(); ++i)
    d.boxed.push_back(pick.uniform() < options.box_share);
  return d;
}

}  // namespace attend::lesson14
