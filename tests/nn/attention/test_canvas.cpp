// Canvas captions: boxes match the pixels drawn, captions name the objects in layout order,
// and every content word points at its object. Uses the generated stand-in pictures, so no
// dataset is needed.
#include "support.h"

using namespace attend;
using namespace attend::data;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {
CanvasGenerator shapes_generator(CanvasOptions options = {}) {
  return CanvasGenerator(synthetic_fashion_mnist(Split::kTrain, 500, 1), options);
}
float brightest(const NDArray& image, Index x, Index y) {
  const Index side = image.size(2);
  const float* p = image.data<float>();
  return std::max(
      {p[(0 * side + y) * side + x], p[(1 * side + y) * side + x], p[(2 * side + y) * side + x]});
}
}  // namespace

TEST_CASE("canvas boxes match the pixels drawn", "[nn]") {
  CanvasGenerator g = shapes_generator();
  Generator gen(2);
  for (int n = 0; n < 200; ++n) {
    CanvasExample e = g.make(gen);
    REQUIRE(e.image.shape() == Shape{3, 64, 64});
    REQUIRE((e.objects.size() >= 1 && e.objects.size() <= 3));
    // Every bright pixel lies in some object's box...
    for (Index y = 0; y < 64; ++y)
      for (Index x = 0; x < 64; ++x) {
        if (brightest(e.image, x, y) <= 0.2f) continue;
        bool inside = false;
        for (const auto& o : e.objects) inside = inside || o.box.contains(x + 0.5, y + 0.5);
        CHECK(inside);
      }
    // ...boxes do not overlap, and each box is tight: its border rows and columns have ink.
    for (std::size_t i = 0; i < e.objects.size(); ++i) {
      const Box& b = e.objects[i].box;
      REQUIRE((b.x0 < b.x1 && b.y0 < b.y1));
      float top = 0, bottom = 0, left = 0, right = 0;
      for (Index x = b.x0; x < b.x1; ++x) {
        top = std::max(top, brightest(e.image, x, b.y0));
        bottom = std::max(bottom, brightest(e.image, x, b.y1 - 1));
      }
      for (Index y = b.y0; y < b.y1; ++y) {
        left = std::max(left, brightest(e.image, b.x0, y));
        right = std::max(right, brightest(e.image, b.x1 - 1, y));
      }
      CHECK(std::min({top, bottom, left, right}) > 0.05f);
      for (std::size_t j = i + 1; j < e.objects.size(); ++j) {
        const Box& c = e.objects[j].box;
        CHECK((b.x1 <= c.x0 || c.x1 <= b.x0 || b.y1 <= c.y0 || c.y1 <= b.y0));
      }
    }
  }
}

TEST_CASE("captions name the objects in layout order and words point at objects", "[nn]") {
  CanvasGenerator g = shapes_generator();
  Generator gen(3);
  for (int n = 0; n < 300; ++n) {
    CanvasExample e = g.make(gen);
    INFO(caption_text(e));
    REQUIRE(e.words.size() == e.word_object.size());
    int named = 0;
    for (std::size_t w = 0; w < e.words.size(); ++w) {
      const int obj = e.word_object[w];
      if (obj < 0) {
        CHECK((e.words[w] == "a" || e.words[w] == "left" || e.words[w] == "of" ||
               e.words[w] == "above"));
        continue;
      }
      const CanvasObject& o = e.objects[static_cast<std::size_t>(obj)];
      const bool is_noun = e.words[w] == g.nouns()[static_cast<std::size_t>(o.label)];
      const bool is_color = e.words[w] == canvas_colors()[static_cast<std::size_t>(o.color)];
      CHECK((is_noun || is_color));
      named += is_noun;
    }
    CHECK(named == static_cast<int>(e.objects.size()));
    // "left of": the earlier object ends before the next begins (x); "above": in y.
    for (std::size_t i = 0; i + 1 < e.objects.size(); ++i) {
      const Box &a = e.objects[i].box, &b = e.objects[i + 1].box;
      const bool horizontal = caption_text(e).find("left of") != std::string::npos;
      if (horizontal)
        CHECK(a.x1 <= b.x0);
      else
        CHECK(a.y1 <= b.y0);
    }
  }
}

TEST_CASE("canvas splits: training canvases visited in chunks as they are made", "[nn]") {
  CanvasGenerator train = shapes_generator();
  CanvasGenerator held_out(synthetic_fashion_mnist(Split::kTest, 200, 1));
  CanvasSplits plain = make_canvas_splits(train, held_out, 10, 2, 2, 5);
  std::vector<std::size_t> sizes;
  std::vector<NDArray> seen;  // the images, in the order the visitor got them
  CanvasSplits visited = make_canvas_splits(
      train, held_out, 10, 2, 2, 5,
      [&](std::span<CanvasExample> chunk) {
        sizes.push_back(chunk.size());
        for (CanvasExample& c : chunk) {
          seen.push_back(c.image);
          c.image = NDArray();  // what a caller that encodes them does
        }
      },
      4);
  CHECK(sizes == std::vector<std::size_t>{4, 4, 2});
  REQUIRE(seen.size() == 10);
  for (std::size_t i = 0; i < 10; ++i) {  // the same canvases, in order, as without chunks
    check_close(seen[i], plain.train[i].image, 0);
    CHECK(caption_text(visited.train[i]) == caption_text(plain.train[i]));
    CHECK_FALSE(visited.train[i].image.defined());  // dropped by the visitor, and kept so
  }
  check_close(visited.test[1].image, plain.test[1].image, 0);
  CHECK_THAT(error_message([&] {
               make_canvas_splits(
                   train, held_out, 3, 1, 1, 5, [](std::span<CanvasExample>) {}, 0);
             }),
             Contains("chunk_size must be positive"));
}

TEST_CASE("canvas splits are reproducible, vocabularies are complete, bad options fail", "[nn]") {
  CanvasGenerator train = shapes_generator();
  CanvasGenerator held_out(synthetic_fashion_mnist(Split::kTest, 200, 1));
  CanvasSplits a = make_canvas_splits(train, held_out, 20, 5, 5, 9);
  CanvasSplits b = make_canvas_splits(train, held_out, 20, 5, 5, 9);
  REQUIRE(a.test.size() == 5);
  CHECK(caption_text(a.train[3]) == caption_text(b.train[3]));
  check_close(a.test[2].image, b.test[2].image, 0);
  std::vector<std::string> vocabulary = train.caption_words();
  for (const auto& e : a.train)
    for (const auto& w : e.words)
      CHECK(std::find(vocabulary.begin(), vocabulary.end(), w) != vocabulary.end());
  CHECK(caption_nouns({"T-shirt/top", "Ankle boot", "Bag"}) ==
        std::vector<std::string>{"t-shirt", "boot", "bag"});
  CHECK_THAT(
      error_message([] { shapes_generator({.size = 40, .max_objects = 3}); }),
      Contains("3 items of at least 18 pixels do not fit side by side on a 40-pixel canvas"));
  CanvasGenerator plain = shapes_generator({.colors = false});
  Generator gen(4);
  for (int n = 0; n < 20; ++n)
    for (const std::string& w : plain.make(gen).words)
      CHECK(std::find(canvas_colors().begin(), canvas_colors().end(), w) == canvas_colors().end());
}

TEST_CASE("a layout is never ambiguous: 'left of' pairs share a row, 'above' pairs a column",
          "[nn]") {
  CanvasGenerator g = shapes_generator();
  Generator gen(12);
  int pairs = 0;
  for (int n = 0; n < 300; ++n) {
    CanvasExample e = g.make(gen);
    for (std::size_t w = 0; w < e.words.size(); ++w) {
      if (e.words[w] != "left" && e.words[w] != "above") continue;
      // The objects named just before and just after the relation word.
      const Box& first = e.objects[static_cast<std::size_t>(e.word_object[w - 1])].box;
      const Box& second =
          e.objects[static_cast<std::size_t>(e.word_object[w + (e.words[w] == "left" ? 3 : 2)])]
              .box;
      if (e.words[w] == "left") {
        CHECK(first.x1 <= second.x0);                           // left of...
        CHECK((first.y0 < second.y1 && second.y0 < first.y1));  // ...and not above or below
      } else {
        CHECK(first.y1 <= second.y0);                           // above...
        CHECK((first.x0 < second.x1 && second.x0 < first.x1));  // ...and not left or right
      }
      ++pairs;
    }
  }
  CHECK(pairs > 200);
}

TEST_CASE("options.classes restricts the items, the nouns and the caption words", "[nn]") {
  CanvasGenerator all = shapes_generator();
  CanvasGenerator some = shapes_generator({.classes = {8, 1}});
  REQUIRE(some.distinct_nouns().size() == 2);
  CHECK(some.distinct_nouns()[0] == all.nouns()[8]);
  CHECK(some.distinct_nouns()[1] == all.nouns()[1]);
  CHECK(some.noun_of_class(8) == 0);
  CHECK(some.noun_of_class(1) == 1);
  CHECK(some.noun_of_class(0) == -1);
  const std::vector<std::string> words = some.caption_words();
  CHECK(std::count(words.begin(), words.end(), all.nouns()[0]) == 0);
  Generator gen(4);
  for (int n = 0; n < 100; ++n)
    for (const CanvasObject& o : some.make(gen).objects) {
      CHECK((o.label == 8 || o.label == 1));
      CHECK(o.noun == some.noun_of_class(o.label));
    }
  CHECK_THAT(error_message([] {
               shapes_generator({.classes = {3, 10}});
             }),
             Contains("class 10 does not exist (10 classes)"));
  CHECK_THAT(error_message([] {
               shapes_generator({.classes = {3, 3}});
             }),
             Contains("class 3 is listed twice"));
}
