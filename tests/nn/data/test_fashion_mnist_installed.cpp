// The real Fashion-MNIST, where it is installed (sudo apt-get install dataset-fashion-mnist).
// This file is its own CTest entry: when the files are absent the case prints "SKIPPED:",
// which attend_add_installed_data_test (tests/CMakeLists.txt) turns into CTest's "Skipped" (Catch2
// v2 has no skip of its own), so a missing data set is never counted as a pass.
// ATTEND_FASHION_MNIST_DIR points the check at another folder (the "(skip path)" CTest entry sets
// it to a folder that does not exist).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "nn/data/fashion_mnist.h"
#include "support.h"

using namespace attend;
using data::Split;

TEST_CASE("the real Fashion-MNIST, where it is installed", "[data]") {
  const char* override_folder = std::getenv("ATTEND_FASHION_MNIST_DIR");
  const std::string folder = override_folder ? override_folder : data::kFashionMnistFolder;
  if (!data::fashion_mnist_available(Split::kTrain, folder) ||
      !data::fashion_mnist_available(Split::kTest, folder)) {
    std::printf(
        "SKIPPED: Fashion-MNIST is not installed in %s "
        "(sudo apt-get install dataset-fashion-mnist)\n",
        folder.c_str());
    return;
  }
  data::LabelledImages train = data::load_fashion_mnist(Split::kTrain, folder);
  data::LabelledImages test = data::load_fashion_mnist(Split::kTest, folder);
  CHECK(train.images.shape() == Shape{60000, 1, 28, 28});
  CHECK(train.labels.shape() == Shape{60000});
  CHECK(test.images.shape() == Shape{10000, 1, 28, 28});
  CHECK(test.labels.shape() == Shape{10000});
  const auto train_labels = train.labels.span<std::int64_t>();
  const auto test_labels = test.labels.span<std::int64_t>();
  const std::vector<std::int64_t> first(train_labels.begin(), train_labels.begin() + 10);
  CHECK(first == std::vector<std::int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5});
  for (std::int64_t label = 0; label < 10; ++label) {  // balanced classes
    CHECK(std::count(train_labels.begin(), train_labels.end(), label) == 6000);
    CHECK(std::count(test_labels.begin(), test_labels.end(), label) == 1000);
  }
  const auto pixels = train.images.span<float>();
  CHECK(*std::min_element(pixels.begin(), pixels.end()) == 0.0f);
  CHECK(*std::max_element(pixels.begin(), pixels.end()) == 1.0f);
}
