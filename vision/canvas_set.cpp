// Canvases as a multi-label data set (canvas_set.h): the multi-hot labels, the three splits,
// and the statistics a model standardises its input with.
#include "vision/canvas_set.h"

#include <cmath>

#include "nn/data/synthetic_images.h"
#include "tensor/error.h"
#include "tensor/shape_ops.h"

namespace attend::vision {

CanvasSet to_canvas_set(const std::vector<data::CanvasExample>& examples, Index classes) {
  if (examples.empty()) fail("to_canvas_set: no canvases");
  if (classes < 1) fail("to_canvas_set: needs at least one class, got {}", classes);
  std::vector<NDArray> images;
  CanvasSet set;
  set.labels = NDArray::zeros({static_cast<Index>(examples.size()), classes}, kFloat32);
  float* labels = set.labels.data<float>();
  for (std::size_t i = 0; i < examples.size(); ++i) {
    images.push_back(examples[i].image);
    for (const data::CanvasObject& object : examples[i].objects) {
      if (object.label < 0 || object.label >= classes)
        fail("to_canvas_set: canvas {} has an object of class {}, outside 0..{}", i, object.label,
             classes - 1);
      labels[static_cast<Index>(i) * classes + object.label] = 1;  // present, however often
    }
    set.objects.push_back(examples[i].objects);
  }
  set.images = stack(images, 0);
  return set;
}

CanvasData make_canvas_data(const CanvasDataOptions& options) {
  if (options.train < 1 || options.validation < 1 || options.test < 1)
    fail("make_canvas_data: every split needs at least one canvas, got {} / {} / {}", options.train,
         options.validation, options.test);
  if (options.canvas_size % 8 != 0 || options.canvas_size < 32)
    fail("make_canvas_data: the canvas side must be a multiple of 8 and at least 32, got {}",
         options.canvas_size);
  // Pictures for the training canvases come from the training split, those for held-out
  // canvases from the test split: a held-out canvas shows items the model has never seen.
  data::LabelledImages train_items, held_out_items;
  if (options.synthetic) {
    train_items = data::synthetic_fashion_mnist(data::Split::kTrain, 6000, options.seed);
    held_out_items = data::synthetic_fashion_mnist(data::Split::kTest, 2000, options.seed);
  } else {
    train_items = data::load_fashion_mnist(data::Split::kTrain, options.folder);
    held_out_items = data::load_fashion_mnist(data::Split::kTest, options.folder);
  }
  data::CanvasOptions canvas;
  canvas.size = options.canvas_size;
  // Items keep the canvas module's 18-26 pixel sides on a 64-pixel canvas, scaled with it.
  canvas.min_item_size = 18 * options.canvas_size / 64;
  canvas.max_item_size = 26 * options.canvas_size / 64;
  CanvasData canvas_data;
  canvas_data.class_names = train_items.class_names;
  const data::CanvasGenerator train_canvases(train_items, canvas);
  const data::CanvasGenerator held_out_canvases(held_out_items, canvas);
  data::CanvasSplits splits = data::make_canvas_splits(
      train_canvases, held_out_canvases, static_cast<std::size_t>(options.train),
      static_cast<std::size_t>(options.validation), static_cast<std::size_t>(options.test),
      options.seed);
  const auto classes = static_cast<Index>(canvas_data.class_names.size());
  canvas_data.train = to_canvas_set(splits.train, classes);
  canvas_data.validation = to_canvas_set(splits.validation, classes);
  canvas_data.test = to_canvas_set(splits.test, classes);
  return canvas_data;
}

std::vector<Index> class_counts(const CanvasSet& set) {
  const Index classes = set.labels.size(1);
  std::vector<Index> counts(static_cast<std::size_t>(classes), 0);
  const float* labels = set.labels.data<float>();
  for (Index i = 0; i < set.size(); ++i)
    for (Index c = 0; c < classes; ++c)
      if (labels[i * classes + c] > 0) ++counts[static_cast<std::size_t>(c)];
  return counts;
}

std::vector<ClassOnCanvas> classes_on_canvases(const CanvasSet& set) {
  const Index classes = set.labels.size(1);
  const float* labels = set.labels.data<float>();
  std::vector<ClassOnCanvas> pairs;
  for (Index i = 0; i < set.size(); ++i) {
    Index present = 0;
    for (Index c = 0; c < classes; ++c) present += labels[i * classes + c] > 0;
    for (Index c = 0; c < classes; ++c)
      if (labels[i * classes + c] > 0) pairs.push_back({i, c, present > 1});
  }
  return pairs;
}

std::vector<data::Box> boxes_of_class(const std::vector<data::CanvasObject>& objects, Index label) {
  std::vector<data::Box> boxes;
  for (const data::CanvasObject& object : objects)
    if (object.label == label) boxes.push_back(object.box);
  return boxes;
}

NDArray canvas_image(const CanvasSet& set, Index i) {
  return slice(set.images, 0, i, i + 1).reshape({3, set.images.size(2), set.images.size(3)});
}

PixelStatistics pixel_statistics(const NDArray& images) {
  if (images.numel() == 0) fail("pixel_statistics: no pixels");
  const std::vector<double> values = images.to_vector();
  double sum = 0, squares = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  for (double v : values) squares += (v - mean) * (v - mean);
  const double std = std::sqrt(squares / static_cast<double>(values.size()));
  return {mean, std > 0 ? std : 1.0};  // a constant image set: nothing to scale
}

}  // namespace attend::vision
