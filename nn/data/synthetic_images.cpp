#include "nn/data/synthetic_images.h"

#include <algorithm>
#include <cmath>

#include "tensor/random.h"

namespace attend::data {
namespace {

constexpr int kSide = 28;
constexpr Index kClasses = 10;

// Whether the pattern of class `label` covers the point (u, v), in coordinates where the
// pattern's box is [-1, 1] x [-1, 1] (v grows downwards, like image rows).
bool covers(Index label, double u, double v) {
  const double au = std::abs(u), av = std::abs(v);
  const bool in_box = au <= 1 && av <= 1;
  // Three bars across the box: the stripes' period is a third of the box.
  auto bar = [](double t) { return std::fmod(t + 4, 2.0 / 3) < 1.0 / 3; };
  switch (label) {
    case 0:
      return in_box && bar(v);  // horizontal stripes
    case 1:
      return in_box && bar(u);  // vertical stripes
    case 2:
      return in_box && bar((u + v) * 0.7071);  // diagonal stripes
    case 3:
      return in_box && (bar(u) == bar(v));  // checkerboard
    case 4:
      return std::abs(std::hypot(u, v) - 0.75) < 0.2;  // ring
    case 5:
      return std::hypot(u, v) < 0.6;  // disc
    case 6:
      return in_box && (au < 0.22 || av < 0.22);  // plus
    case 7:
      return in_box && std::max(au, av) > 0.72;  // frame
    case 8:
      return in_box && (std::abs(u - v) < 0.3 || std::abs(u + v) < 0.3);  // cross (X)
    case 9:
      return v >= -1 && v <= 1 && au <= (v + 1) / 2;  // triangle, pointing up
    default:
      fail("draw_synthetic_image: label {} is not in 0..9", label);
  }
}

}  // namespace

const std::vector<std::string>& synthetic_class_names() {
  static const std::vector<std::string> names = {"horizontal stripes",
                                                 "vertical stripes",
                                                 "diagonal stripes",
                                                 "checkerboard",
                                                 "ring",
                                                 "disc",
                                                 "plus",
                                                 "frame",
                                                 "cross",
                                                 "triangle"};
  return names;
}

void draw_synthetic_image(Index label, Generator& gen, float* out) {
  if (label < 0 || label >= kClasses)
    fail("draw_synthetic_image: label {} is not in 0..{}", label, kClasses - 1);
  const double centre_x = 13.5 + gen.uniform(-2, 2), centre_y = 13.5 + gen.uniform(-2, 2);
  const double half_size = gen.uniform(8, 11);  // half the side of the pattern's box, in pixels
  const double brightness = gen.uniform(0.6, 1.0);
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) {
      const double u = (x - centre_x) / half_size, v = (y - centre_y) / half_size;
      const double ink = covers(label, u, v) ? brightness : 0.0;
      const double noisy = ink + gen.normal(0, 0.1);
      out[y * kSide + x] = static_cast<float>(std::clamp(noisy, 0.0, 1.0));
    }
}

LabelledImages synthetic_fashion_mnist(Split split, Index count, std::uint64_t seed) {
  if (count < 0) fail("synthetic_fashion_mnist: count must be >= 0, got {}", count);
  if (count == 0) count = split == Split::kTrain ? 60000 : 10000;
  // Two different streams for the two splits (splitmix64 seeding spreads nearby seeds).
  Generator gen(2 * seed + (split == Split::kTest ? 1 : 0));

  // Balanced labels 0, 1, ..., 9, 0, 1, ... in a random order.
  std::vector<Index> order = gen.permutation(count);
  LabelledImages out;
  out.labels = NDArray::empty(Shape{count}, kInt64);
  std::int64_t* labels = out.labels.data<std::int64_t>();
  for (Index i = 0; i < count; ++i) labels[order[static_cast<std::size_t>(i)]] = i % kClasses;

  out.images = NDArray::empty(Shape{count, 1, kSide, kSide}, kFloat32);
  float* pixels = out.images.data<float>();
  for (Index i = 0; i < count; ++i)
    draw_synthetic_image(labels[i], gen, pixels + i * kSide * kSide);
  out.class_names = synthetic_class_names();
  return out;
}

}  // namespace attend::data
