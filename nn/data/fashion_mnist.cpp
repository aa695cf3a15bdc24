#include "nn/data/fashion_mnist.h"

#include <filesystem>

#include "nn/data/idx.h"

namespace attend::data {
namespace {

// The Debian package ships "<prefix>-images-idx3-ubyte.gz"; an unpacked copy lacks ".gz".
std::string find_file(const std::string& folder, const std::string& name) {
  for (const char* suffix : {".gz", ""}) {
    std::filesystem::path path = std::filesystem::path(folder) / (name + suffix);
    if (std::filesystem::is_regular_file(path)) return path.string();
  }
  return "";
}

std::string file_prefix(Split split) {
  return split == Split::kTrain ? "train" : "t10k";
}

}  // namespace

const std::vector<std::string>& fashion_mnist_class_names() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

bool fashion_mnist_available(Split split, const std::string& folder) {
  return !find_file(folder, file_prefix(split) + "-images-idx3-ubyte").empty() &&
         !find_file(folder, file_prefix(split) + "-labels-idx1-ubyte").empty();
}

LabelledImages load_fashion_mnist(Split split, const std::string& folder, Index limit) {
  if (limit < 0) fail("load_fashion_mnist: limit must be >= 0 (0 reads all), got {}", limit);
  const std::string images_name = file_prefix(split) + "-images-idx3-ubyte";
  const std::string labels_name = file_prefix(split) + "-labels-idx1-ubyte";
  const std::string images_path = find_file(folder, images_name);
  const std::string labels_path = find_file(folder, labels_name);
  if (images_path.empty() || labels_path.empty())
    fail(
        "Fashion-MNIST not found in {} (no {}.gz): install it with `sudo apt-get install "
        "dataset-fashion-mnist`, or run scripts/setup.sh",
        folder, images_path.empty() ? images_name : labels_name);

  const IdxArray images = read_idx(images_path, limit);
  const IdxArray labels = read_idx(labels_path, limit);
  if (images.type != IdxType::u8 || images.shape.ndim() != 3 || images.shape[1] != 28 ||
      images.shape[2] != 28)
    fail("'{}' does not hold Fashion-MNIST images: expected uint8 [N,28,28], got type 0x{:02X} {}",
         images_path, static_cast<int>(images.type), images.shape);
  if (labels.type != IdxType::u8 || labels.shape.ndim() != 1)
    fail("'{}' does not hold Fashion-MNIST labels: expected uint8 [N], got type 0x{:02X} {}",
         labels_path, static_cast<int>(labels.type), labels.shape);
  if (images.shape[0] != labels.shape[0])
    fail("Fashion-MNIST in {}: {} images but {} labels", folder, images.shape[0], labels.shape[0]);

  LabelledImages out;
  const Index n = images.shape[0];
  out.images = images.to_array(kFloat32, kFashionMnistScale).reshape({n, 1, 28, 28});
  out.labels = labels.to_array(kInt64);
  const std::int64_t* label = out.labels.data<std::int64_t>();
  for (Index i = 0; i < n; ++i)
    if (label[i] < 0 || label[i] > 9)
      fail("'{}': label {} of item {} is not a class of Fashion-MNIST (0 to 9)", labels_path,
           label[i], i);
  out.class_names = fashion_mnist_class_names();
  return out;
}

}  // namespace attend::data
