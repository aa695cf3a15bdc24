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

}  // namespace

ShortcutData make_shortcut_data(const DataOptions& options) {
  if (options.train < 1 || options.validation < 1 || options.test < 1)
    fail("make_shortcut_data: every split needs at least one canvas, got {} / {} / {}",
         options.train, options.validation, options.test);
  if (!(options.box_share >= 0 && options.box_share <= 1))
    fail("make_shortcut_data: box_share must lie in [0, 1], got {}", options.box_share);
  data::LabelledImages train_items, held_out_items;
  if (options.synthetic) {
    train_items =
        data::synthetic_fashion_mnist(data::Split::kTrain, kSyntheticTrainItems, options.seed);
    held_out_items =
        data::synthetic_fashion_mnist(data::Split::kTest, kSyntheticTestItems, options.seed);
  } else {
    train_items = data::load_fashion_mnist(data::Split::kTrain, options.folder);
    held_out_items = data::load_fashion_mnist(data::Split::kTest, options.folder);
  }
  data::CanvasOptions canvas;
  canvas.classes = kShortcutClasses;
  canvas.cue = options.cue;
  data::CueSplits splits =
      data::make_cue_splits(train_items, held_out_items, canvas,
                            {.train = static_cast<std::size_t>(options.train),
                             .validation = static_cast<std::size_t>(options.validation),
                             .test = static_cast<std::size_t>(options.test)},
                            options.seed);
  ShortcutData d;
  d.class_names = train_items.class_names;
  d.cue_class = options.cue.label;
  d.train = to_cue_set(std::move(splits.train));
  d.validation = to_cue_set(std::move(splits.validation));
  d.aligned = to_cue_set(std::move(splits.aligned));
  d.conflicting = to_cue_set(std::move(splits.conflicting));
  d.independent = to_cue_set(std::move(splits.independent));
  // The canvases whose boxes GAIN_ext sees: a fixed random share, drawn by their own
  // generator so that the canvases themselves do not depend on it.
  Generator pick(options.seed + 3);
  for (Index i = 0; i < d.train.set.size(); ++i)
    d.boxed.push_back(pick.uniform() < options.box_share);
  return d;
}

}  // namespace attend::lesson14
