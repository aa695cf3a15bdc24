// The background cue of lesson 14 (nn/data/canvas_cue.h): off, the canvases are exactly those
// drawn before the cue existed; on, the band appears at the rates asked, beside the items and
// never over them, and the aligned, conflicting and independent test sets hold the same items.
// Uses the generated stand-in pictures, so no dataset is needed.
#include <cstring>

#include "nn/data/canvas_cue.h"
#include "support.h"

using namespace attend;
using namespace attend::data;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

constexpr Index kCueClass = 1;

CanvasGenerator cue_test_generator(CanvasOptions options = {}) {
  return CanvasGenerator(synthetic_fashion_mnist(Split::kTrain, 500, 1), options);
}

CanvasOptions with_cue(CanvasCue cue) {
  cue.label = kCueClass;
  CanvasOptions options;
  options.cue = cue;
  return options;
}

bool holds_class(const CanvasExample& e, Index label) {
  for (const CanvasObject& o : e.objects)
    if (o.label == label) return true;
  return false;
}

// FNV-1a over what a canvas draws from the random stream: every object's class, noun, colour
// and box, and the caption's words. The pixels are left out: the stand-in pictures go through
// libm (sin, exp), whose last bits differ between CPUs (glibc picks a version per CPU), so a
// checksum of the pixels would tie the test to one machine.
std::uint64_t fnv(std::uint64_t h, const void* p, std::size_t n) {
  const auto* bytes = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}
std::uint64_t checksum(const CanvasGenerator& g, std::uint64_t seed, int n) {
  Generator gen(seed);
  std::uint64_t h = 14695981039346656037ull;
  for (int i = 0; i < n; ++i) {
    CanvasExample e = g.make(gen);
    CHECK_FALSE(e.has_cue);
    for (const CanvasObject& o : e.objects) {
      const Index v[7] = {o.label, o.noun, o.box.x0, o.box.y0, o.box.x1, o.box.y1, o.color};
      h = fnv(h, v, sizeof v);
    }
    for (const std::string& word : e.words) h = fnv(h, word.c_str(), word.size() + 1);
  }
  return h;
}

// The same canvases, pixel for pixel, from two generators on this machine.
bool same_pixels(const CanvasGenerator& a, const CanvasGenerator& b, std::uint64_t seed, int n) {
  Generator gen_a(seed), gen_b(seed);
  for (int i = 0; i < n; ++i) {
    const CanvasExample x = a.make(gen_a), y = b.make(gen_b);
    if (x.image.shape() != y.image.shape()) return false;
    const auto bytes = static_cast<std::size_t>(x.image.numel()) * sizeof(float);
    if (std::memcmp(x.image.data<float>(), y.image.data<float>(), bytes) != 0) return false;
  }
  return true;
}

bool apart(const Box& a, const Box& b, Index gap) {
  return a.x1 + gap <= b.x0 || b.x1 + gap <= a.x0 || a.y1 + gap <= b.y0 || b.y1 + gap <= a.y0;
}

}  // namespace

TEST_CASE("without a cue the canvases are draw for draw those drawn before the cue existed",
          "[nn]") {
  // The checksums of the draws were computed at commit 929c31a, whose generator still gave
  // the pixel checksums of the generator before CanvasCue (commit df00ad6) on the machine that
  // wrote this test: lessons 08-10 see the same canvases, draw for draw.
  constexpr std::uint64_t kAllClasses = 9976956199707363515ull,
                          kFiveClasses = 1587201687916635191ull;
  CHECK(checksum(cue_test_generator(), 5, 50) == kAllClasses);
  CHECK(checksum(cue_test_generator({.classes = {0, 1, 5, 8, 9}}), 6, 50) == kFiveClasses);
  CanvasOptions off;
  off.cue.label = -1;  // said explicitly
  CHECK(checksum(cue_test_generator(off), 5, 50) == kAllClasses);
  CHECK(same_pixels(cue_test_generator(), cue_test_generator(off), 5, 50));
}

TEST_CASE("the cue band lies beside the items, full length, in its colour", "[nn]") {
  CanvasCue cue;
  cue.p_with = cue.p_without = 1;  // on every canvas
  CanvasGenerator g = cue_test_generator(with_cue(cue));
  Generator gen(3);
  for (int n = 0; n < 200; ++n) {
    CanvasExample e = g.make(gen);
    REQUIRE(e.has_cue);
    const Box& b = e.cue_box;
    const bool horizontal = b.x0 == 0 && b.x1 == 64;
    CHECK((horizontal ? b.y1 - b.y0 : b.x1 - b.x0) == cue.thickness);
    CHECK((horizontal || (b.y0 == 0 && b.y1 == 64)));
    for (const CanvasObject& o : e.objects) CHECK(apart(b, o.box, kCueGap));
    const float* p = e.image.data<float>();
    for (Index c = 0; c < 3; ++c)
      for (Index y = b.y0; y < b.y1; ++y)
        for (Index x = b.x0; x < b.x1; ++x)
          REQUIRE(p[(c * 64 + y) * 64 + x] == cue.color[static_cast<std::size_t>(c)]);
  }
}

TEST_CASE("the cue appears with its class at the rates asked", "[nn]") {
  CanvasCue cue;  // p_with 0.95, p_without 0.02
  CanvasGenerator g = cue_test_generator(with_cue(cue));
  Generator gen(8);
  double with = 0, with_cue_n = 0, without = 0, without_cue_n = 0;
  for (int n = 0; n < 3000; ++n) {
    CanvasExample e = g.make(gen);
    CHECK(e.has_cue == (e.cue_box.x1 > e.cue_box.x0));
    if (holds_class(e, kCueClass)) {
      ++with;
      with_cue_n += e.has_cue;
    } else {
      ++without;
      without_cue_n += e.has_cue;
    }
  }
  // Binomial standard errors: sqrt(0.95 * 0.05 / ~560) = 0.009, sqrt(0.02 * 0.98 / ~2440) =
  // 0.003; the bounds are 4 of them.
  REQUIRE(with > 400);
  CHECK_THAT(with_cue_n / with, Catch::Matchers::WithinAbs(0.95, 0.036));
  CHECK_THAT(without_cue_n / without, Catch::Matchers::WithinAbs(0.02, 0.012));
}

TEST_CASE("cue splits: aligned, conflicting, independent are the same canvases", "[nn]") {
  CanvasCue cue;
  const CanvasOptions options = with_cue(cue);
  const LabelledImages train = synthetic_fashion_mnist(Split::kTrain, 300, 1);
  const LabelledImages held_out = synthetic_fashion_mnist(Split::kTest, 200, 1);
  CueSplits s =
      make_cue_splits(train, held_out, options, {.train = 30, .validation = 5, .test = 60}, 4);
  CHECK(s.train.size() == 30);
  CHECK(s.validation.size() == 5);
  REQUIRE(s.aligned.size() == 60);
  int independent = 0;
  for (std::size_t i = 0; i < 60; ++i) {
    const bool present = holds_class(s.aligned[i], kCueClass);
    CHECK(s.aligned[i].has_cue == present);
    CHECK(s.conflicting[i].has_cue == !present);
    independent += s.independent[i].has_cue;
    REQUIRE(s.conflicting[i].objects.size() == s.aligned[i].objects.size());
    for (std::size_t k = 0; k < s.aligned[i].objects.size(); ++k)
      CHECK(s.conflicting[i].objects[k].box.x0 == s.aligned[i].objects[k].box.x0);
    // Outside their two bands the images are equal.
    std::vector<NDArray> cleared;
    for (const CanvasExample* e : {&s.aligned[i], &s.conflicting[i]}) {
      NDArray image = e->image.clone();
      float* p = image.data<float>();
      for (const Box& b : {s.aligned[i].cue_box, s.conflicting[i].cue_box})
        for (Index c = 0; c < 3; ++c)
          for (Index y = b.y0; y < b.y1; ++y)
            for (Index x = b.x0; x < b.x1; ++x) p[(c * 64 + y) * 64 + x] = 0;
      cleared.push_back(image);
    }
    check_close(cleared[0], cleared[1], 0);
  }
  CHECK((independent > 15 && independent < 45));  // about half of 60
  CueSplits again =
      make_cue_splits(train, held_out, options, {.train = 30, .validation = 5, .test = 60}, 4);
  check_close(again.train[7].image, s.train[7].image, 0);
  check_close(again.independent[9].image, s.independent[9].image, 0);
}

TEST_CASE("bad cue options fail with a clear message", "[nn]") {
  CanvasCue cue;
  cue.label = 3;
  CanvasOptions options;
  options.classes = {0, 1};
  options.cue = cue;
  CHECK_THAT(error_message([&] { cue_test_generator(options); }),
             Contains("the cue's class 3 is not one of the canvases' classes"));
  options = with_cue(cue);
  options.cue.p_with = 1.5;
  CHECK_THAT(error_message([&] { cue_test_generator(options); }),
             Contains("the cue's probabilities must lie in [0, 1], got 1.5 and 0.02"));
  options = with_cue(cue);
  options.cue.thickness = 20;
  CHECK_THAT(error_message([&] { cue_test_generator(options); }),
             Contains("a 20-pixel cue band does not fit beside the items"));
  CHECK_THAT(error_message([&] {
               make_cue_splits(synthetic_fashion_mnist(Split::kTrain, 50, 1),
                               synthetic_fashion_mnist(Split::kTest, 50, 1), {}, {1, 1, 1}, 0);
             }),
             Contains("the options have no cue"));
}
