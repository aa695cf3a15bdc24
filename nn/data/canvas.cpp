#include "nn/data/canvas.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "nn/data/canvas_cue.h"
#include "nn/viz/image.h"
#include "tensor/error.h"

namespace attend::data {
namespace {

constexpr double kInkThreshold = 0.15;  // a pixel belongs to the object's box above this
constexpr Index kMinGap = 2;            // pixels between objects along the layout axis
// Across the layout axis, every object's centre lies within this many pixels of a shared
// line, so that objects named "left of" each other form a row and "above" a column: a
// diagonal pair, which both words would describe, never occurs.
constexpr Index kAcrossJitter = 3;

struct Rgb {
  float r, g, b;
};
const std::vector<Rgb>& tints() {
  static const std::vector<Rgb> kTints = {
      {1.0f, 0.25f, 0.2f}, {0.25f, 1.0f, 0.3f}, {0.35f, 0.5f, 1.0f}, {1.0f, 0.95f, 0.2f}};
  return kTints;
}

// Splits `free` pixels into `parts` gaps of at least kMinGap each, at random.
std::vector<Index> random_gaps(Index free, int parts, Generator& gen) {
  std::vector<double> weights(static_cast<std::size_t>(parts));
  double total = 0;
  for (double& w : weights) total += (w = gen.uniform() + 1e-3);
  const Index spare = free - kMinGap * parts;
  std::vector<Index> gaps;
  Index used = 0;
  for (int i = 0; i < parts; ++i) {
    Index g = kMinGap + static_cast<Index>(std::floor(spare * weights[i] / total));
    gaps.push_back(g);
    used += g;
  }
  gaps.back() += free - used;  // rounding leftovers
  return gaps;
}

// Paints a size x size grey picture p at (x0, y0) of the [3, side, side] canvas, tinted;
// returns the box of its ink (pixels above kInkThreshold), or the whole square if blank.
Box paint_item(float* canvas, Index side, const float* p, Index size, Index x0, Index y0,
               Rgb tint) {
  Box box{side, side, 0, 0};
  for (Index y = 0; y < size; ++y)
    for (Index x = 0; x < size; ++x) {
      const float v = std::clamp(p[y * size + x], 0.0f, 1.0f);
      const Index cy = y0 + y, cx = x0 + x;
      canvas[(0 * side + cy) * side + cx] = v * tint.r;
      canvas[(1 * side + cy) * side + cx] = v * tint.g;
      canvas[(2 * side + cy) * side + cx] = v * tint.b;
      if (v > kInkThreshold) {
        box.x0 = std::min(box.x0, cx);
        box.y0 = std::min(box.y0, cy);
        box.x1 = std::max(box.x1, cx + 1);
        box.y1 = std::max(box.y1, cy + 1);
      }
    }
  if (box.x1 <= box.x0) box = Box{x0, y0, x0 + size, y0 + size};  // a blank item
  return box;
}

// The caption names the objects in layout order: "a red bag left of a blue shoe".
void write_caption(CanvasExample& example, const std::vector<std::string>& nouns, bool colors,
                   bool horizontal) {
  for (std::size_t i = 0; i < example.objects.size(); ++i) {
    const int object = static_cast<int>(i);
    if (i > 0) {
      if (horizontal) {
        example.words.insert(example.words.end(), {"left", "of"});
        example.word_object.insert(example.word_object.end(), {-1, -1});
      } else {
        example.words.push_back("above");
        example.word_object.push_back(-1);
      }
    }
    example.words.push_back("a");
    example.word_object.push_back(-1);
    if (colors) {
      example.words.push_back(canvas_colors()[static_cast<std::size_t>(example.objects[i].color)]);
      example.word_object.push_back(object);
    }
    example.words.push_back(nouns[static_cast<std::size_t>(example.objects[i].label)]);
    example.word_object.push_back(object);
  }
}

}  // namespace

const std::vector<std::string>& canvas_colors() {
  static const std::vector<std::string> kColors = {"red", "green", "blue", "yellow"};
  return kColors;
}

std::vector<std::string> caption_nouns(const std::vector<std::string>& class_names) {
  std::vector<std::string> nouns;
  for (const std::string& name : class_names) {
    std::string noun;
    if (name == "T-shirt/top")
      noun = "t-shirt";
    else if (name == "Ankle boot")
      noun = "boot";
    else
      for (char c : name)
        noun += c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    nouns.push_back(noun);
  }
  return nouns;
}

CanvasGenerator::CanvasGenerator(LabelledImages items, CanvasOptions options)
    : labels_(items.labels),
      options_(std::move(options)),
      nouns_(caption_nouns(items.class_names)) {
  choose_items();
  if (items.images.shape() != Shape{items.size(), 1, 28, 28})
    fail("CanvasGenerator: source items must be [N,1,28,28], got {}", items.images.shape());
  // As bytes when they are Fashion-MNIST's: the float array (`items`, moved in) is freed on
  // return, unless the caller still holds it.
  pictures_ = PictureStore(items.images);
  check_layout();
}

CanvasGenerator::CanvasGenerator(const CanvasGenerator& source, CanvasOptions options)
    : pictures_(source.pictures_),
      labels_(source.labels_),
      options_(std::move(options)),
      nouns_(source.nouns_) {
  choose_items();
  check_layout();
}

void CanvasGenerator::choose_items() {
  const Index class_count = static_cast<Index>(nouns_.size());
  if (options_.classes.empty())
    for (Index c = 0; c < class_count; ++c) options_.classes.push_back(c);
  noun_of_class_.assign(nouns_.size(), -1);
  for (Index c : options_.classes) {
    if (c < 0 || c >= class_count)
      fail("CanvasGenerator: class {} does not exist ({} classes)", c, class_count);
    if (noun_of_class_[static_cast<std::size_t>(c)] >= 0)
      fail("CanvasGenerator: class {} is listed twice", c);
    noun_of_class_[static_cast<std::size_t>(c)] = static_cast<Index>(distinct_nouns_.size());
    distinct_nouns_.push_back(nouns_[static_cast<std::size_t>(c)]);
  }
  const Index count = labels_.defined() ? labels_.size(0) : 0;
  const std::int64_t* labels = std::as_const(labels_).data<std::int64_t>();
  for (Index i = 0; i < count; ++i)
    if (labels[i] >= 0 && labels[i] < class_count &&
        noun_of_class_[static_cast<std::size_t>(labels[i])] >= 0)
      usable_items_.push_back(i);
  if (usable_items_.empty())
    fail("CanvasGenerator: none of the {} source items is of the chosen classes [{}]", count,
         fmt::join(options_.classes, ", "));
}

void CanvasGenerator::check_layout() const {
  if (options_.min_objects < 1 || options_.max_objects < options_.min_objects)
    fail("CanvasGenerator: needs 1 <= min_objects <= max_objects, got {} and {}",
         options_.min_objects, options_.max_objects);
  const Index needed =
      options_.max_objects * options_.min_item_size + (options_.max_objects + 1) * kMinGap;
  if (options_.min_item_size < 4 || options_.max_item_size < options_.min_item_size ||
      needed > options_.size)
    fail(
        "CanvasGenerator: {} items of at least {} pixels do not fit side by side on a {}-pixel "
        "canvas",
        options_.max_objects, options_.min_item_size, options_.size);
  // Items wander at most this far across the layout axis (their shared line, jittered).
  check_cue(options_, options_.max_item_size + 2 * kAcrossJitter + 1);
}

Index CanvasGenerator::noun_of_class(Index label) const {
  if (label < 0 || label >= static_cast<Index>(noun_of_class_.size()))
    fail("CanvasGenerator::noun_of_class: class {} does not exist ({} classes)", label,
         noun_of_class_.size());
  return noun_of_class_[static_cast<std::size_t>(label)];
}

std::vector<std::string> CanvasGenerator::caption_words() const {
  std::vector<std::string> words = {"a", "left", "of", "above"};
  if (options_.colors)
    for (const std::string& c : canvas_colors()) words.push_back(c);
  for (const std::string& n : distinct_nouns_) words.push_back(n);
  return words;
}

CanvasExample CanvasGenerator::make(Generator& gen) const {
  const Index side = options_.size;
  const int count = options_.min_objects +
                    static_cast<int>(gen.randint(options_.max_objects - options_.min_objects + 1));
  const bool horizontal = gen.bernoulli(0.5);  // name objects left to right, or top to bottom

  // Sizes: as large as allowed, but `count` of them must fit along the layout axis.
  const Index largest = std::min(options_.max_item_size, (side - (count + 1) * kMinGap) / count);
  std::vector<Index> sizes;
  Index total = 0;
  for (int i = 0; i < count; ++i) {
    sizes.push_back(options_.min_item_size + gen.randint(largest - options_.min_item_size + 1));
    total += sizes.back();
  }
  std::vector<Index> gaps = random_gaps(side - total, count + 1, gen);
  // The shared line across the layout axis: the largest item, jittered, must still fit.
  const Index largest_drawn = *std::max_element(sizes.begin(), sizes.end());
  const Index line_low = (largest_drawn + 1) / 2 + kAcrossJitter;
  const Index line_high = std::max(line_low, side - largest_drawn / 2 - kAcrossJitter);
  const Index line = line_low + gen.randint(line_high - line_low + 1);

  CanvasExample example;
  example.image = NDArray::zeros({3, side, side});
  float* canvas = example.image.data<float>();
  Index along = 0;
  for (int i = 0; i < count; ++i) {
    along += gaps[i];
    const Index jitter = gen.randint(2 * kAcrossJitter + 1) - kAcrossJitter;
    const Index across = std::clamp<Index>(line - sizes[i] / 2 + jitter, 0, side - sizes[i]);
    const Index x0 = horizontal ? along : across, y0 = horizontal ? across : along;
    along += sizes[i];

    const Index item = usable_items_[static_cast<std::size_t>(
        gen.randint(static_cast<Index>(usable_items_.size())))];
    CanvasObject object;
    object.label = static_cast<Index>(labels_.data<std::int64_t>()[item]);
    object.noun = noun_of_class_[static_cast<std::size_t>(object.label)];
    object.color =
        options_.colors ? static_cast<int>(gen.randint(static_cast<Index>(tints().size()))) : 0;
    NDArray scaled = viz::resize_bilinear(pictures_.picture(item), sizes[i], sizes[i]);
    const float* p = scaled.data<float>();
    const Rgb tint =
        options_.colors ? tints()[static_cast<std::size_t>(object.color)] : Rgb{1, 1, 1};
    object.box = paint_item(canvas, side, p, sizes[i], x0, y0, tint);
    example.objects.push_back(object);
  }

  write_caption(example, nouns_, options_.colors, horizontal);
  // Only with a cue: without one, make() draws exactly the numbers it always drew.
  if (options_.cue.label >= 0) add_cue(example, options_.cue, horizontal, gen);
  return example;
}

CanvasSplits make_canvas_splits(const CanvasGenerator& train_items,
                                const CanvasGenerator& held_out_items, std::size_t train,
                                std::size_t validation, std::size_t test, std::uint64_t seed,
                                const CanvasChunkVisitor& train_chunks, std::size_t chunk_size) {
  if (train_chunks && chunk_size == 0) fail("make_canvas_splits: chunk_size must be positive");
  CanvasSplits splits;
  Generator train_gen(seed), held_out_gen(seed + 1);
  splits.train.reserve(train);
  std::size_t visited = 0;  // training canvases already passed to train_chunks
  for (std::size_t i = 0; i < train; ++i) {
    splits.train.push_back(train_items.make(train_gen));
    if (train_chunks && (i + 1 - visited == chunk_size || i + 1 == train)) {
      train_chunks(std::span<CanvasExample>(splits.train.data() + visited, i + 1 - visited));
      visited = i + 1;
    }
  }
  for (std::size_t i = 0; i < validation; ++i)
    splits.validation.push_back(held_out_items.make(held_out_gen));
  for (std::size_t i = 0; i < test; ++i) splits.test.push_back(held_out_items.make(held_out_gen));
  return splits;
}

std::string caption_text(const CanvasExample& example) {
  std::string text;
  for (const std::string& w : example.words) text += (text.empty() ? "" : " ") + w;
  return text;
}

}  // namespace attend::data
