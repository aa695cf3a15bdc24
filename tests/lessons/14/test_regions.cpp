// Lesson 14, objects against the grid: the library's object regions (seq/captioning/
// object_regions.h) worked by hand on a tiny canvas, the pooling's gradcheck (float64, eps 1e-6,
// |analytic - numeric| <= 1e-6 + 1e-4 |numeric|), the decoder's padding masked exactly, and
// localisation over regions with centres.
#include "lessons/14_attention_shortcuts/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::captioning;

namespace {

GradcheckOptions tolerances() {
  GradcheckOptions options;
  options.eps = 1e-6;
  options.atol = 1e-6;
  options.rtol = 1e-4;
  return options;
}

// An 8x8 canvas, ink (0.9) in the green channel only ('#'), a faint pixel (0.1, 'o'):
//
//   y0  ##......   A: 5 pixels, box [0,4) x [0,2); (3,1) joins across one dark pixel
//   y1  ##.#....
//   y2  ........
//   y3  ....o...   below the threshold: not ink (ink, it would join A at reach 2)
//   y4  .....###   B: 6 pixels, box [5,8) x [4,6)
//   y5  .....###
//   y6  #.......   C: 2 pixels, box [0,1) x [6,8)
//   y7  #.......
NDArray tiny_canvas() {
  const char* rows[8] = {"##......", "##.#....", "........", "....o...",
                         ".....###", ".....###", "#.......", "#......."};
  NDArray image = NDArray::zeros({3, 8, 8});
  for (Index y = 0; y < 8; ++y)
    for (Index x = 0; x < 8; ++x) {
      const char c = rows[y][x];
      if (c != '.') image.set({1, y, x}, c == '#' ? 0.9 : 0.1);
    }
  return image;
}

void check_box(const data::Box& box, Index x0, Index y0, Index x1, Index y1) {
  CHECK(box.x0 == x0);
  CHECK(box.y0 == y0);
  CHECK(box.x1 == x1);
  CHECK(box.y1 == y1);
}

}  // namespace

TEST_CASE("propose_regions: the components of a tiny canvas, worked by hand", "[lesson14]") {
  const NDArray canvas = tiny_canvas();
  ProposalOptions o{.min_pixels = 2};
  std::vector<Proposal> p = propose_regions(canvas, o);
  REQUIRE(p.size() == 3);  // in scan order: A (pixel 0), B (pixel 37), C (pixel 48)
  check_box(p[0].box, 0, 0, 4, 2);
  CHECK(p[0].pixels == std::vector<Index>{0, 1, 8, 9, 11});
  check_box(p[1].box, 5, 4, 8, 6);
  CHECK(p[1].pixels.size() == 6);
  check_box(p[2].box, 0, 6, 1, 8);
  CHECK(p[2].pixels == std::vector<Index>{48, 56});

  // The defaults drop C (2 < 4 pixels); max_regions keeps the largest, in scan order.
  CHECK(propose_regions(canvas).size() == 2);
  o.max_regions = 2;
  p = propose_regions(canvas, o);
  REQUIRE(p.size() == 2);
  CHECK(p[0].pixels.size() == 5);
  CHECK(p[1].pixels.size() == 6);
  // Reach 1 (touching pixels only): A's lone pixel (3,1) is its own component, then dropped.
  p = propose_regions(canvas, {.reach = 1, .min_pixels = 2});
  REQUIRE(p.size() == 3);
  check_box(p[0].box, 0, 0, 2, 2);
  // A lower threshold makes the faint pixel ink, and it joins A and B into one (reach 2).
  p = propose_regions(canvas, {.threshold = 0.05, .min_pixels = 2});
  REQUIRE(p.size() == 2);
  check_box(p[0].box, 0, 0, 8, 6);
  // No ink: the whole canvas.
  p = propose_regions(NDArray::zeros({3, 8, 8}));
  REQUIRE(p.size() == 1);
  check_box(p[0].box, 0, 0, 8, 8);
  CHECK(p[0].pixels.size() == 64);

  CHECK_THAT(error_message([] {
               propose_regions(NDArray::zeros({3, 8, 6}));
             }),
             Catch::Matchers::Contains("propose_regions: expected a square image"));
}

TEST_CASE("pooling_weights: each cell's share of a proposal's pixels, by hand", "[lesson14]") {
  // 8x8 canvas, 2x2 grid of 4-pixel cells. A 2x2 block at the centre covers all four cells
  // equally; pixels (0,0), (1,0), (5,0) put 2/3 in cell 0 and 1/3 in cell 1.
  std::vector<Proposal> p(2);
  p[0].pixels = {3 * 8 + 3, 3 * 8 + 4, 4 * 8 + 3, 4 * 8 + 4};
  p[1].pixels = {0, 1, 5};
  const NDArray w = pooling_weights(p, 2, 8);
  check_close(w.to(kFloat64), f64({0.25, 0.25, 0.25, 0.25, 2.0 / 3, 1.0 / 3, 0, 0}, {2, 4}), 1e-7);
  CHECK_THAT(error_message([&] { pooling_weights(p, 3, 8); }),
             Catch::Matchers::Contains("does not split into a 3x3 grid"));
}

TEST_CASE("pool_regions passes gradcheck: the gradient reaches the cells", "[gradcheck]") {
  Generator gen(4);
  Tensor weights = rand({2, 3, 4}, gen, kFloat64);
  Tensor cells = randn({2, 4, 5}, gen, kFloat64).requires_grad_();
  GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return pool_regions(weights, in[0]); },
                {cells}, tolerances());
  INFO(r.report);
  CHECK(r.ok);
  CHECK_THAT(error_message([&] {
               pool_regions(weights, randn({2, 5, 5}, gen));
             }),
             Catch::Matchers::Contains("pool_regions: weights [B, K, L] and cells [B, L, D]"));
}

TEST_CASE("object_regions: pooled features, box numbers and zero padding, by hand", "[lesson14]") {
  // Grid regions of one 8x8 canvas on a 2x2 grid: cell l has features (2l + 1, 2l + 2) and
  // two coordinates (dropped). A lies in cell 0, B in cell 3; C is dropped (2 < 4 pixels).
  NDArray grid = NDArray::zeros({1, 4, 2 + kPositionFeatures});
  for (Index l = 0; l < 4; ++l) {
    grid.set({0, l, 0}, 2 * l + 1);
    grid.set({0, l, 1}, 2 * l + 2);
    grid.set({0, l, 2}, 0.5);
    grid.set({0, l, 3}, -0.5);
  }
  std::vector<data::CanvasExample> canvases(1);
  canvases[0].image = tiny_canvas();
  const ObjectRegions o = object_regions(grid, canvases, {.max_regions = 3});
  // A: box [0,4) x [0,2) of 8 pixels: width 1, height 0.5, centre (-0.5, -0.75).
  // B: box [5,8) x [4,6): width 0.75, height 0.5, centre (0.625, 0.25).
  check_close(o.regions.to(kFloat64),
              f64({1, 2, 1, 0.5, -0.5, -0.75,     //
                   7, 8, 0.75, 0.5, 0.625, 0.25,  //
                   0, 0, 0, 0, 0, 0},
                  {1, 3, 6}),
              1e-6);
  CHECK(o.real_regions == 2);
  REQUIRE(o.boxes.size() == 1);
  REQUIRE(o.boxes[0].size() == 2);
  check_box(o.boxes[0][1], 5, 4, 8, 6);
  check_close(region_mask(Tensor(o.regions)).data().to(kFloat64), f64({1, 1, 0}, {1, 3}), 0);
  const auto centres = region_centres(o);
  CHECK(centres[0][0] == std::array<double, 2>{2.0, 1.0});

  canvases[0].image = NDArray();  // dropped images cannot be proposed
  CHECK_THAT(error_message([&] { object_regions(grid, canvases); }),
             Catch::Matchers::Contains("canvas 0 has no image"));
}

TEST_CASE("padded regions are masked exactly: attention computes what it does without them",
          "[lesson14]") {
  Generator gen(7);
  const Index features = 3 + kBoxFeatures;
  CaptionDecoder decoder(
      {.vocab = 6, .features = features, .embedding = 2, .hidden = 3, .attention = 3}, gen);
  decoder.to(kFloat64);
  decoder.eval();
  decoder.padded_regions = true;
  Tensor real = randn({1, 2, features}, gen, kFloat64);
  Tensor padded = concat({real, zeros({1, 3, features}, kFloat64)}, 1);
  Tensor words(NDArray::from_vector(std::vector<std::int64_t>{1}, {1}));
  // f_init reads the sum of the real regions over all 5 slots (it says how many there are).
  const nn::LSTMState state = decoder.initial_state(padded);
  check_close(state.h.data(), tanh(decoder.init_h(sum(real, 1) / 5.0)).data());
  // From the same state, a step over the padded regions is the step over the real ones.
  DecoderStep a = decoder.step(real, decoder.project_regions(real), words, state);
  DecoderStep b = decoder.step(padded, decoder.project_regions(padded), words, state);
  check_close(b.logits.data(), a.logits.data());
  check_close(slice(b.alpha.data(), 1, 0, 2), a.alpha.data());
  for (Index i = 2; i < 5; ++i) CHECK(b.alpha.data().at({0, i}) == 0.0);  // exactly
  check_close(sum(b.alpha, -1).data(), NDArray::ones({1}, kFloat64));
  // Without the flag, the zero rows are regions like any other and take attention.
  decoder.padded_regions = false;
  DecoderStep c = decoder.step(padded, decoder.project_regions(padded), words, state);
  CHECK(c.alpha.data().at({0, 4}) > 0.0);
}

TEST_CASE("the decoder over padded regions passes gradcheck (real regions and parameters)",
          "[gradcheck]") {
  Generator gen(8);
  const Index features = 2 + kBoxFeatures;
  CaptionDecoder decoder(
      {.vocab = 5, .features = features, .embedding = 2, .hidden = 3, .attention = 3}, gen);
  decoder.to(kFloat64);
  decoder.padded_regions = true;
  // Canvas 0 has 3 real regions, canvas 1 has 1 and 2 rows of padding.
  Tensor real = randn({2, 3, features}, gen, kFloat64).requires_grad_();
  NDArray keep = NDArray::ones({2, 3, 1}, kFloat64);
  keep.set({1, 1, 0}, 0);
  keep.set({1, 2, 0}, 0);
  Tensor inputs(NDArray::from_vector(std::vector<std::int64_t>{1, 2, 3, 4}, {2, 2}));
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        return unroll(decoder, in[0] * Tensor(keep), inputs).logits;
      },
      with_parameters({real}, decoder), tolerances());
  INFO(r.report);
  CHECK(r.ok);
}

TEST_CASE("localisation over regions with centres: by hand, and the same as the grid's",
          "[lesson14]") {
  data::CanvasExample c;
  c.words = {"a", "bag"};
  c.word_object = {-1, 0};
  c.objects.push_back({.box = {0, 0, 4, 4}});
  // Two real regions (centres (2, 2) inside the box, (6, 6) outside) and one padded.
  NDArray maps = f64({0.1, 0.9, 0, 0.7, 0.2, 0.1}, {2, 3});
  interpret::Localisation l = interpret::localisation({c}, {maps}, {{{2.0, 2.0}, {6.0, 6.0}}});
  CHECK(l.noun_hit_rate == 1.0);
  CHECK_THAT(l.mass_in_box, Catch::Matchers::WithinAbs(0.7, 1e-15));
  CHECK_THAT(l.noun_mass_in_box, Catch::Matchers::WithinAbs(0.7, 1e-15));
  CHECK(l.before_hit_rate == 0.0);  // at "a", the argmax (6, 6) is outside

  // A 2x2 grid over an 8-pixel canvas, as the centres of its cells: the same numbers.
  c.objects[0].box = {0, 0, 8, 4};
  NDArray grid_maps = f64({0.1, 0.2, 0.3, 0.4, 0.6, 0.1, 0.2, 0.1}, {2, 4});
  const auto g = interpret::localisation({c}, {grid_maps}, 2, 8);
  const auto r = interpret::localisation({c}, {grid_maps}, {{{2, 2}, {6, 2}, {2, 6}, {6, 6}}});
  CHECK(g.noun_hit_rate == r.noun_hit_rate);
  CHECK(g.mass_in_box == r.mass_in_box);
  CHECK(g.before_hit_rate == r.before_hit_rate);
  CHECK_THAT(r.mass_in_box, Catch::Matchers::WithinAbs(0.7, 1e-15));
}
