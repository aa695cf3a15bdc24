// Fashion-MNIST (Xiao, Rasul and Vollgraf, 2017): 70,000 grey 28x28 pictures of clothes in
// 10 classes, 60,000 to train on and 10,000 to test with. It has MNIST's format and size but
// is harder to classify, so models differ more visibly.
//
// Debian's package dataset-fashion-mnist installs the four IDX files (gzip-compressed) in
// /usr/share/datasets/fashion-mnist. When they are missing, load_fashion_mnist throws an
// Error saying how to install them; synthetic_fashion_mnist (nn/data/synthetic_images.h)
// generates a stand-in with the same shapes that needs no download.
#pragma once

#include <string>
#include <vector>

#include "nn/data/dataset.h"

namespace attend::data {

enum class Split { kTrain, kTest };

// Labelled pictures: what load_fashion_mnist and synthetic_fashion_mnist return.
struct LabelledImages {
  NDArray images;  // float32 [N, 1, 28, 28], values in [0, 1] (0 = black background)
  NDArray labels;  // int64 [N], values in 0..class_names.size()-1
  std::vector<std::string> class_names;

  Index size() const { return labels.defined() ? labels.size(0) : 0; }
  ArrayDataset dataset() const { return ArrayDataset(images, labels); }
};

inline constexpr const char* kFashionMnistFolder = "/usr/share/datasets/fashion-mnist";

// A picture's bytes k (0 to 255) become the float32 k * kFashionMnistScale, computed in
// float64 and rounded once: fashion_mnist_pixel(k), the values of LabelledImages::images.
inline constexpr double kFashionMnistScale = 1.0 / 255;
inline float fashion_mnist_pixel(int k) {
  return static_cast<float>(static_cast<double>(k) * kFashionMnistScale);
}

// "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
// "Bag", "Ankle boot": the names of labels 0 to 9.
const std::vector<std::string>& fashion_mnist_class_names();

// True when the files of `split` are in `folder` (compressed or not).
bool fashion_mnist_available(Split split, const std::string& folder = kFashionMnistFolder);

// Reads a split: 60,000 training or 10,000 test items, or the first `limit` of them when
// limit > 0 (faster: the rest of the file is not read).
LabelledImages load_fashion_mnist(Split split, const std::string& folder = kFashionMnistFolder,
                                  Index limit = 0);

}  // namespace attend::data
