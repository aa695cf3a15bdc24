// Canvases of 1 to 3 items (nn/data/canvas.h) as a multi-label classification set. The
// caption is not used here; what is kept is which classes are on the canvas (the targets) and
// where their objects are (the boxes that the pointing game scores maps against). A classifier
// never sees a box.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/data/canvas.h"
#include "nn/data/fashion_mnist.h"
#include "tensor/ndarray.h"

namespace attend::vision {

// Canvases as arrays, ready for a DataLoader, with the objects (labels and boxes) kept for
// the pointing game.
struct CanvasSet {
  NDArray images;  // float32 [N, 3, S, S], values in [0, 1]
  NDArray labels;  // float32 [N, classes]: 1 if at least one object of the class is on it
  std::vector<std::vector<data::CanvasObject>> objects;  // per canvas, with exact boxes
  Index size() const { return images.defined() ? images.size(0) : 0; }
};

// Stacks the canvases and writes their multi-hot labels (a canvas with two bags and a coat
// has 1 at "bag" and "coat" and 0 elsewhere).
CanvasSet to_canvas_set(const std::vector<data::CanvasExample>& examples, Index classes);

struct CanvasDataOptions {
  Index train = 4000, validation = 300, test = 600;  // canvases in each split
  std::uint64_t seed = 0;                            // which canvases are drawn
  bool synthetic = false;  // the generated stand-in for Fashion-MNIST (no files needed)
  std::string folder = data::kFashionMnistFolder;
  Index canvas_size = 64;  // side in pixels: a multiple of 8, at least 32
};

// The three splits, and the names of the classes (the labels' columns).
struct CanvasData {
  CanvasSet train, validation, test;
  std::vector<std::string> class_names;  // Fashion-MNIST's, or the synthetic patterns'
};

// Training canvases are drawn from Fashion-MNIST's training pictures, validation and test
// canvases from its test pictures (items the model never saw), by make_canvas_splits. The
// same options give the same canvases. The pictures are freed before it returns, and the
// allocator's cached blocks with them (memory::empty_cache): what is left is the sets.
CanvasData make_canvas_data(const CanvasDataOptions& options);
// The training set of make_canvas_data(options) alone, the same canvases, without making the
// held-out ones: for a program that frees its training canvases between the phases that use
// them (lesson 13 trains a second model on them at its end) and makes them again.
CanvasSet make_training_canvases(const CanvasDataOptions& options);

// How many canvases of the set contain each class.
std::vector<Index> class_counts(const CanvasSet& set);

// The boxes of the objects of class `label` on one canvas (several when it appears twice).
// One (canvas, class present on it): what a map of class `label` on canvas `canvas` is scored
// against. distractor: another class is on the canvas too (the "difficult" case of Zhang et
// al. 2016, where pointing at any object is not enough).
struct ClassOnCanvas {
  Index canvas = 0, label = 0;
  bool distractor = false;
};
// Every such pair of the set, canvas by canvas, each canvas's classes in order.
std::vector<ClassOnCanvas> classes_on_canvases(const CanvasSet& set);

std::vector<data::Box> boxes_of_class(const std::vector<data::CanvasObject>& objects, Index label);

// Canvas i of a set as an image [3, S, S].
NDArray canvas_image(const CanvasSet& set, Index i);

// The mean and standard deviation of all the pixels of images [N, C, H, W] (std 1 when all
// pixels are equal: nothing to scale). A model standardises its input with them,
// (x - mean) / std, as torchvision's Normalize does.
struct PixelStatistics {
  double mean = 0, std = 1;
};
PixelStatistics pixel_statistics(const NDArray& images);

}  // namespace attend::vision
