// (1) The data. Fashion-MNIST: 60,000 training and 10,000 test pictures of clothes,
// 28 x 28 grey pixels in [0, 1], ten classes with 6,000 and 1,000 pictures each. The test
// pictures are never trained on: they measure how well a model does on pictures it has not
// seen, which is what matters.
#include <algorithm>

#include "lesson.h"

namespace attend::lesson03 {

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream, int epoch) {
  // Room for 16 streams and 65,536 epochs per seed.
  return (seed * 16 + stream) * 65536 + static_cast<std::uint64_t>(epoch);
}

Data load_data(const DataOptions& options) {
  if (options.train_limit < 0 || options.test_limit < 0)
    fail("load_data: the limits must be >= 0 (0: every picture), got {} and {}",
         options.train_limit, options.test_limit);
  Data out;
  if (options.synthetic) {
    out.train =
        data::synthetic_fashion_mnist(data::Split::kTrain, options.train_limit, options.seed);
    out.test = data::synthetic_fashion_mnist(data::Split::kTest, options.test_limit, options.seed);
    out.source = "the generated stand-in (nn/data/synthetic_images.h), not Fashion-MNIST";
    return out;
  }
  // Throws "Fashion-MNIST not found in ...: install it with ..." when the files are missing.
  out.train = data::load_fashion_mnist(data::Split::kTrain, options.folder, options.train_limit);
  out.test = data::load_fashion_mnist(data::Split::kTest, options.folder, options.test_limit);
  out.source = "Fashion-MNIST from " + options.folder;
  return out;
}

std::vector<Index> class_counts(const data::LabelledImages& images) {
  std::vector<Index> counts(static_cast<std::size_t>(kClasses), 0);
  for (std::int64_t label : images.labels.span<std::int64_t>())
    ++counts.at(static_cast<std::size_t>(label));
  return counts;
}

NDArray sample_sheet(const data::LabelledImages& images, Index per_class) {
  if (per_class < 1) fail("sample_sheet: per_class must be at least 1, got {}", per_class);
  constexpr Index kGap = 2;
  const Index cell = kImageSize + kGap;
  NDArray sheet = NDArray::ones({1, kClasses * cell - kGap, per_class * cell - kGap});
  float* out = sheet.data<float>();
  const Index sheet_width = sheet.size(2);
  const float* pixels = images.images.data<float>();
  const std::int64_t* labels = images.labels.data<std::int64_t>();
  std::vector<Index> placed(static_cast<std::size_t>(kClasses), 0);
  for (Index i = 0; i < images.size(); ++i) {
    const Index label = labels[i];
    Index& column = placed[static_cast<std::size_t>(label)];
    if (column == per_class) continue;
    const float* picture = pixels + i * kImageSize * kImageSize;
    for (Index r = 0; r < kImageSize; ++r)
      std::copy(picture + r * kImageSize, picture + (r + 1) * kImageSize,
                out + (label * cell + r) * sheet_width + column * cell);
    ++column;
  }
  return sheet;
}

}  // namespace attend::lesson03
