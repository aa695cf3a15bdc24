// Canvases as a multi-label data set (canvas_set.h): the multi-hot labels, the three splits,
// and the statistics a model standardises its input with.
#include "vision/canvas_set.h"

#include <cmath>
#include <cstring>
#include <span>

#include "nn/data/synthetic_images.h"
#include "tensor/allocator.h"
#include "tensor/error.h"
#include "tensor/shape_ops.h"

namespace attend::vision {

namespace {

// Training canvases made before they are copied into the set and their images dropped.
constexpr std::size_t kTrainChunk = 128;

// A set with room for `count` canvases shaped like `first`, and no canvas in it yet.
CanvasSet empty_canvas_set(Index count, Index classes, const data::CanvasExample& first) {
  if (classes < 1) fail("to_canvas_set: needs at least one class, got {}", classes);
  std::vector<Index> sizes{count};
  for (Index s : first.image.shape()) sizes.push_back(s);
  CanvasSet set;
  set.images = NDArray::empty(Shape(sizes), first.image.dtype());
  set.labels = NDArray::zeros({count, classes}, kFloat32);
  set.objects.reserve(static_cast<std::size_t>(count));
  return set;
}

// Copies one canvas into the next free row of the set: its image, its multi-hot labels
// (a canvas with two bags and a coat has 1 at "bag" and "coat" and 0 elsewhere), its objects.
void add_canvas(CanvasSet& set, const data::CanvasExample& example) {
  const auto i = static_cast<Index>(set.objects.size());
  const Index classes = set.labels.size(1);
  const std::size_t bytes = set.images.nbytes() / static_cast<std::size_t>(set.images.size(0));
  if (example.image.nbytes() != bytes || example.image.dtype() != set.images.dtype())
    fail("to_canvas_set: canvas {} is {} {}, unlike the first one (the set is {} {})", i,
         example.image.shape(), dtype_name(example.image.dtype()), set.images.shape(),
         dtype_name(set.images.dtype()));
  std::memcpy(static_cast<char*>(set.images.raw_data()) + static_cast<std::size_t>(i) * bytes,
              example.image.raw_data(), bytes);
  float* labels = set.labels.data<float>() + i * classes;
  for (const data::CanvasObject& object : example.objects) {
    if (object.label < 0 || object.label >= classes)
      fail("to_canvas_set: canvas {} has an object of class {}, outside 0..{}", i, object.label,
           classes - 1);
    labels[object.label] = 1;  // present, however often
  }
  set.objects.push_back(example.objects);
}

}  // namespace

CanvasSet to_canvas_set(const std::vector<data::CanvasExample>& examples, Index classes) {
  if (examples.empty()) fail("to_canvas_set: no canvases");
  CanvasSet set = empty_canvas_set(static_cast<Index>(examples.size()), classes, examples[0]);
  for (const data::CanvasExample& example : examples) add_canvas(set, example);
  return set;
}

namespace {

// The split-making generators' settings: items keep the canvas module's 18-26 pixel sides on
// a 64-pixel canvas, scaled with it.
data::CanvasOptions canvas_options(const CanvasDataOptions& options) {
  data::CanvasOptions canvas;
  canvas.size = options.canvas_size;
  canvas.min_item_size = 18 * options.canvas_size / 64;
  canvas.max_item_size = 26 * options.canvas_size / 64;
  return canvas;
}

// Fashion-MNIST's pictures of one split (or the generated stand-in's).
data::LabelledImages load_items(const CanvasDataOptions& options, data::Split split) {
  if (options.synthetic)
    return data::synthetic_fashion_mnist(split, split == data::Split::kTrain ? 6000 : 2000,
                                         options.seed);
  return data::load_fashion_mnist(split, options.folder);
}

// The training canvases, from the training pictures, copied into their set a chunk at a time
// as they are made and their images dropped at once, so that they never exist twice (as
// canvases and as the set: 2 x 200 MB for 4,000 canvases). The generator keeps Fashion-MNIST's
// pictures as bytes (47 MB): their float32 array (188 MB) goes back to the system before the
// set is made, so that the two never exist at once. The bytes are freed on return.
CanvasSet draw_training(const CanvasDataOptions& options, std::vector<std::string>& class_names) {
  data::LabelledImages items = load_items(options, data::Split::kTrain);
  class_names = items.class_names;
  const auto classes = static_cast<Index>(class_names.size());
  const data::CanvasGenerator train(std::move(items), canvas_options(options));
  memory::empty_cache();  // the float32 pictures, freed by the generator
  CanvasSet set;
  auto into_train_set = [&](std::span<data::CanvasExample> chunk) {
    if (!set.images.defined()) set = empty_canvas_set(options.train, classes, chunk[0]);
    for (data::CanvasExample& example : chunk) {
      add_canvas(set, example);
      example.image = NDArray();
    }
  };
  // (No held-out canvas is made here: the second generator is not used.)
  data::make_canvas_splits(train, train, static_cast<std::size_t>(options.train), 0, 0,
                           options.seed, into_train_set, kTrainChunk);
  return set;
}

// The canvases of the three splits, into `out`, one source of pictures at a time: the
// training canvases (draw_training); then, with the training pictures freed, the held-out
// canvases from the test pictures. make_canvas_splits draws the two kinds from generators of
// their own, so making them in two calls gives the same canvases as one.
void draw_canvases(const CanvasDataOptions& options, CanvasData& out) {
  out.train = draw_training(options, out.class_names);
  memory::empty_cache();  // the training canvases' own images, each copied into the set
  // Pictures for held-out canvases come from the test split: they show items the model has
  // never seen. (No training canvas is made here: the first generator is not used.)
  const data::CanvasGenerator held_out(load_items(options, data::Split::kTest),
                                       canvas_options(options));
  const data::CanvasSplits splits =
      data::make_canvas_splits(held_out, held_out, 0, static_cast<std::size_t>(options.validation),
                               static_cast<std::size_t>(options.test), options.seed);
  const auto classes = static_cast<Index>(out.class_names.size());
  out.validation = to_canvas_set(splits.validation, classes);
  out.test = to_canvas_set(splits.test, classes);
}

// make_canvas_data's checks of the options.
void check_options(const char* name, const CanvasDataOptions& options) {
  if (options.train < 1 || options.validation < 1 || options.test < 1)
    fail("{}: every split needs at least one canvas, got {} / {} / {}", name, options.train,
         options.validation, options.test);
  if (options.canvas_size % 8 != 0 || options.canvas_size < 32)
    fail("{}: the canvas side must be a multiple of 8 and at least 32, got {}", name,
         options.canvas_size);
}

}  // namespace

CanvasData make_canvas_data(const CanvasDataOptions& options) {
  check_options("make_canvas_data", options);
  CanvasData canvas_data;
  draw_canvases(options, canvas_data);
  // The test pictures and the held-out canvases' own images are freed now. The allocator
  // would keep their blocks for reuse (tensor/allocator.h), but no array of those sizes comes
  // again: they go back to the system.
  memory::empty_cache();
  return canvas_data;
}

CanvasSet make_training_canvases(const CanvasDataOptions& options) {
  check_options("make_training_canvases", options);
  std::vector<std::string> class_names;
  CanvasSet set = draw_training(options, class_names);
  memory::empty_cache();  // the training pictures: back to the system
  return set;
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
  // Two passes over the pixels as they are, summing in float64: the same sums, in the same
  // order, as over a float64 copy of them, without the copy (8 bytes a pixel: 390 MB for
  // lesson 08's 4,000 training canvases).
  double sum = 0, squares = 0;
  dispatch_float(images.dtype(), "pixel_statistics", [&]<class T>() {
    const T* pixels = images.data<T>();
    const Index n = images.numel();
    for (Index i = 0; i < n; ++i) sum += static_cast<double>(pixels[i]);
    const double mean = sum / static_cast<double>(n);
    for (Index i = 0; i < n; ++i) {
      const double d = static_cast<double>(pixels[i]) - mean;
      squares += d * d;
    }
  });
  const auto n = static_cast<double>(images.numel());
  const double mean = sum / n, std = std::sqrt(squares / n);
  return {mean, std > 0 ? std : 1.0};  // a constant image set: nothing to scale
}

}  // namespace attend::vision
