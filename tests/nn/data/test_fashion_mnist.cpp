// Fashion-MNIST: the loader on small IDX files written here, its errors, and the generated
// stand-in (shapes, balance, reproducibility, learnability). The real files are checked in
// test_fashion_mnist_installed.cpp, a CTest entry of its own that reports itself skipped
// when they are not installed.
#include <algorithm>

#include "nn/data/data_loader.h"
#include "nn/data/idx.h"
#include "nn/data/synthetic_images.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "scratch_dir.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using data::Split;

namespace {

// Writes a Fashion-MNIST-like split with n images whose pixel (r, c) of image i is
// (i + r + c) % 256, and the given labels.
void write_fake_split(const ScratchDir& dir, const std::string& prefix, Index n,
                      std::initializer_list<double> labels, Index side = 28) {
  NDArray images = NDArray::empty({n, side, 28}, kFloat64);
  for (Index i = 0; i < n; ++i)
    for (Index r = 0; r < side; ++r)
      for (Index c = 0; c < 28; ++c) images.set({i, r, c}, static_cast<double>((i + r + c) % 256));
  data::write_idx(dir.file(prefix + "-images-idx3-ubyte.gz"), images, data::IdxType::u8, true);
  data::write_idx(dir.file(prefix + "-labels-idx1-ubyte.gz"), NDArray::from_list(labels, kFloat64),
                  data::IdxType::u8, true);
}

std::vector<Index> class_counts(const NDArray& labels, Index classes) {
  std::vector<Index> counts(static_cast<std::size_t>(classes), 0);
  for (std::int64_t label : labels.span<std::int64_t>()) {
    REQUIRE((label >= 0 && label < classes));
    ++counts[static_cast<std::size_t>(label)];
  }
  return counts;
}

}  // namespace

TEST_CASE("load_fashion_mnist reads a split from IDX files", "[data]") {
  ScratchDir dir("fmnist-fake");
  write_fake_split(dir, "t10k", 3, {9, 0, 4});
  data::LabelledImages test = data::load_fashion_mnist(Split::kTest, dir.path().string());
  CHECK(test.size() == 3);
  CHECK(test.images.shape() == Shape{3, 1, 28, 28});
  CHECK(test.images.dtype() == kFloat32);
  CHECK(test.labels.dtype() == kInt64);
  check_close(test.labels, NDArray::from_list({9, 0, 4}, kInt64), 0);
  CHECK(test.images.at({0, 0, 0, 0}) == 0.0f);
  CHECK(test.images.at({2, 0, 3, 4}) == static_cast<float>(9.0 / 255));
  CHECK(test.class_names == data::fashion_mnist_class_names());
  CHECK(test.class_names[9] == "Ankle boot");
  CHECK(data::fashion_mnist_available(Split::kTest, dir.path().string()));
  CHECK_FALSE(data::fashion_mnist_available(Split::kTrain, dir.path().string()));

  data::LabelledImages first = data::load_fashion_mnist(Split::kTest, dir.path().string(), 2);
  CHECK(first.images.shape() == Shape{2, 1, 28, 28});
  check_close(first.labels, NDArray::from_list({9, 0}, kInt64), 0);
  // It plugs into a DataLoader.
  data::DataLoader loader(test.dataset(), {.batch_size = 2});
  CHECK(loader.size() == 2);
}

TEST_CASE("missing Fashion-MNIST files say how to install them", "[data]") {
  ScratchDir dir("fmnist-missing");
  CHECK(error_message([&] { data::load_fashion_mnist(Split::kTrain, dir.path().string()); }) ==
        "Fashion-MNIST not found in " + dir.path().string() +
            " (no train-images-idx3-ubyte.gz): install it with `sudo apt-get install "
            "dataset-fashion-mnist`, or run scripts/setup.sh");
}

TEST_CASE("Fashion-MNIST files with the wrong contents are refused", "[data]") {
  {
    ScratchDir dir("fmnist-shape");
    write_fake_split(dir, "train", 2, {1, 2}, 27);
    CHECK_THAT(error_message([&] { data::load_fashion_mnist(Split::kTrain, dir.path().string()); }),
               Contains("does not hold Fashion-MNIST images: expected uint8 [N,28,28], got type "
                        "0x08 [2,27,28]"));
  }
  {
    ScratchDir dir("fmnist-count");
    write_fake_split(dir, "train", 2, {1, 2, 3});
    CHECK(error_message([&] { data::load_fashion_mnist(Split::kTrain, dir.path().string()); }) ==
          "Fashion-MNIST in " + dir.path().string() + ": 2 images but 3 labels");
  }
  {
    ScratchDir dir("fmnist-label");
    write_fake_split(dir, "train", 2, {1, 10});
    CHECK_THAT(error_message([&] { data::load_fashion_mnist(Split::kTrain, dir.path().string()); }),
               Contains("label 10 of item 1 is not a class of Fashion-MNIST (0 to 9)"));
  }
}

TEST_CASE("the synthetic stand-in has Fashion-MNIST's shapes and balanced labels", "[data]") {
  data::LabelledImages train = data::synthetic_fashion_mnist(Split::kTrain, 95);
  CHECK(train.images.shape() == Shape{95, 1, 28, 28});
  CHECK(train.images.dtype() == kFloat32);
  CHECK(train.labels.shape() == Shape{95});
  CHECK(train.labels.dtype() == kInt64);
  CHECK(train.class_names.size() == 10);
  CHECK(train.class_names == data::synthetic_class_names());
  for (Index count : class_counts(train.labels, 10)) CHECK((count == 9 || count == 10));
  const auto pixels = train.images.span<float>();
  CHECK(*std::min_element(pixels.begin(), pixels.end()) >= 0.0f);
  CHECK(*std::max_element(pixels.begin(), pixels.end()) <= 1.0f);
  // Not all the same: the labels are shuffled, and pictures have ink.
  CHECK(train.labels.to_vector() !=
        data::synthetic_fashion_mnist(Split::kTrain, 95, 1).labels.to_vector());
  CHECK(*std::max_element(pixels.begin(), pixels.end()) > 0.5f);
  CHECK(data::synthetic_fashion_mnist(Split::kTest).size() == 10000);
}

TEST_CASE("the synthetic stand-in is reproducible, and its splits differ", "[data]") {
  auto a = data::synthetic_fashion_mnist(Split::kTrain, 30, 5);
  auto b = data::synthetic_fashion_mnist(Split::kTrain, 30, 5);
  auto test = data::synthetic_fashion_mnist(Split::kTest, 30, 5);
  CHECK(a.images.to_vector() == b.images.to_vector());
  CHECK(a.labels.to_vector() == b.labels.to_vector());
  CHECK(a.images.to_vector() != test.images.to_vector());
  CHECK_THAT(error_message([] {
               Generator gen(0);
               std::vector<float> out(28 * 28);
               data::draw_synthetic_image(10, gen, out.data());
             }),
             Contains("label 10 is not in 0..9"));
  CHECK_THAT(error_message([] { data::synthetic_fashion_mnist(Split::kTrain, -1); }),
             Contains("count must be >= 0"));
}

TEST_CASE("a linear classifier learns the synthetic stand-in to high accuracy", "[data]") {
  data::LabelledImages train = data::synthetic_fashion_mnist(Split::kTrain, 600);
  data::LabelledImages test = data::synthetic_fashion_mnist(Split::kTest, 300);
  Generator init(1);
  nn::Linear classifier(28 * 28, 10, true, init);
  data::DataLoader loader(train.dataset(), {.batch_size = 100, .shuffle = true, .seed = 2});
  for (int epoch = 0; epoch < 10; ++epoch)
    for (const data::Batch& batch : loader) {
      Tensor loss =
          nn::cross_entropy(classifier(reshape(batch.inputs, {batch.size(), 784})), batch.targets);
      classifier.zero_grad();
      loss.backward();
      for (Tensor& p : classifier.parameters()) add_(p.data(), p.grad().data(), -0.5);
    }
  NoGradGuard no_grad;
  Tensor predicted = argmax(classifier(Tensor(test.images.reshape({300, 784}))), 1);
  const auto guesses = predicted.data().span<std::int64_t>();
  const auto truth = test.labels.span<std::int64_t>();
  Index correct = 0;
  for (std::size_t i = 0; i < guesses.size(); ++i) correct += guesses[i] == truth[i];
  const double accuracy = static_cast<double>(correct) / 300;
  INFO("test accuracy " << accuracy);
  CHECK(accuracy > 0.85);  // chance is 0.1
}
