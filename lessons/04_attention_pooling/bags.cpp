// (b) Bags for multiple-instance learning (MIL). A bag is a set of pictures ("instances")
// with one label for the whole set: positive iff at least one instance is of the target
// class, Y = max_k y_k (Ilse et al. 2018, the MIL problem statement). The model is told only Y;
// which instance made the bag positive is what attention pooling will point at.
//
// As in Ilse et al.'s MNIST-bags, bag sizes are drawn from a normal distribution (mean 10,
// variance 2). Unlike their code, which draws instances at random and so gets whatever
// share of positive bags chance gives, here exactly half of the bags are positive, and a
// positive bag holds between 1 and max_positives target instances: few positives make
// localisation a real test.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "lesson.h"

namespace attend::lesson04 {
namespace {

constexpr Index kPixels = 28 * 28;

Index draw_bag_size(const BagOptions& options, Generator& gen) {
  const double size = std::round(gen.normal(options.mean_size, options.size_std));
  return std::max(options.min_size, static_cast<Index>(size));
}

}  // namespace

Bags make_bags(const data::LabelledImages& pictures, const BagOptions& options, Generator& gen) {
  if (options.count < 2) fail("make_bags: need at least 2 bags, got {}", options.count);
  if (options.min_size < 1 || options.max_positives < 1)
    fail("make_bags: min_size and max_positives must be at least 1");
  const Index classes = static_cast<Index>(pictures.class_names.size());
  if (options.target_class < 0 || options.target_class >= classes)
    fail("make_bags: the target class must be in 0..{}, got {}", classes - 1, options.target_class);
  if (pictures.images.shape() != Shape{pictures.size(), 1, 28, 28})
    fail("make_bags: need pictures [N, 1, 28, 28], got {}", pictures.images.shape());

  // Which pictures may fill a positive slot, and which a negative one.
  std::vector<Index> targets, others;
  const std::int64_t* label = pictures.labels.data<std::int64_t>();
  for (Index i = 0; i < pictures.size(); ++i)
    (label[i] == options.target_class ? targets : others).push_back(i);
  if (targets.empty() || others.empty())
    fail("make_bags: the pictures need both class {} and other classes", options.target_class);

  // First decide every bag: its size, its label, and which picture goes where.
  std::vector<std::vector<Index>> chosen(static_cast<std::size_t>(options.count));
  std::vector<bool> positive(chosen.size());
  Index longest = 0;
  for (std::size_t b = 0; b < chosen.size(); ++b) {
    const Index size = draw_bag_size(options, gen);
    positive[b] = b % 2 == 0;  // half of the bags; their order is shuffled below
    Index n_positive = 0;
    if (positive[b]) n_positive = 1 + gen.randint(std::min(options.max_positives, size));
    std::vector<Index>& bag = chosen[b];
    for (Index k = 0; k < size; ++k) {
      const std::vector<Index>& pool = k < n_positive ? targets : others;
      bag.push_back(pool[static_cast<std::size_t>(gen.randint(static_cast<Index>(pool.size())))]);
    }
    // Put the positives at random places (a model must not learn "look at the front").
    std::vector<Index> order = gen.permutation(size);
    std::vector<Index> shuffled;
    for (Index k : order) shuffled.push_back(bag[static_cast<std::size_t>(k)]);
    bag = shuffled;
    longest = std::max(longest, size);
  }
  std::vector<Index> bag_order = gen.permutation(options.count);

  // Then copy the pictures into padded arrays.
  const Index count = options.count;
  Bags bags;
  bags.images = NDArray::zeros({count, longest, 1, 28, 28});
  bags.mask = NDArray::zeros({count, longest});
  bags.labels = NDArray::zeros({count});
  bags.instance_labels = NDArray::zeros({count, longest});
  bags.classes = NDArray::full({count, longest}, -1, kInt64);
  const float* source = pictures.images.data<float>();
  float* image = bags.images.data<float>();
  float* mask = bags.mask.data<float>();
  float* bag_label = bags.labels.data<float>();
  float* instance_label = bags.instance_labels.data<float>();
  std::int64_t* instance_class = bags.classes.data<std::int64_t>();
  for (Index b = 0; b < count; ++b) {
    const std::size_t from = static_cast<std::size_t>(bag_order[static_cast<std::size_t>(b)]);
    bag_label[b] = positive[from] ? 1.0f : 0.0f;
    const std::vector<Index>& bag = chosen[from];
    for (Index k = 0; k < static_cast<Index>(bag.size()); ++k) {
      const Index picture = bag[static_cast<std::size_t>(k)];
      const Index slot = b * longest + k;
      std::memcpy(image + slot * kPixels, source + picture * kPixels, kPixels * sizeof(float));
      mask[slot] = 1;
      instance_class[slot] = label[picture];
      instance_label[slot] = label[picture] == options.target_class ? 1.0f : 0.0f;
    }
  }
  return bags;
}

Bags select_bags(const Bags& bags, const std::vector<Index>& positions) {
  if (positions.empty()) fail("select_bags: no bags selected");
  std::vector<std::int64_t> ids(positions.begin(), positions.end());
  NDArray index = NDArray::from_vector(ids, Shape{static_cast<Index>(ids.size())});
  NDArray mask = index_select(bags.mask, 0, index);
  // The longest selected bag: later slots are padding in every selected bag.
  Index length = 0;
  const float* m = mask.data<float>();
  for (Index b = 0; b < mask.size(0); ++b)
    for (Index k = 0; k < mask.size(1); ++k)
      if (m[b * mask.size(1) + k] != 0) length = std::max(length, k + 1);
  auto cut = [&](const NDArray& x) { return slice(index_select(x, 0, index), 1, 0, length); };
  Bags out;
  out.images = cut(bags.images);
  out.mask = slice(mask, 1, 0, length);
  out.labels = index_select(bags.labels, 0, index);
  out.instance_labels = cut(bags.instance_labels);
  out.classes = cut(bags.classes);
  return out;
}

}  // namespace attend::lesson04
