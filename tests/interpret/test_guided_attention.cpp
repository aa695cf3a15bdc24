// interpret/guided_attention.h: GAIN's pieces (the map in the graph, scaled and upsampled;
// the soft mask; the masked image; the mining and extra losses) on values worked by hand, and
// float64 gradchecks of each and of the whole chain, the mining loss through the soft mask
// into the map (tolerances: gradcheck's defaults, eps 1e-6, atol 1e-5, rtol 1e-3). Then the
// adversarial erasing step on arrays.
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

double sigmoid_of(double x) {
  return 1 / (1 + std::exp(-x));
}

Tensor random_input(const Shape& shape, Generator& gen, double low = -1, double high = 1) {
  return Tensor(NDArray::uniform(shape, gen, low, high, kFloat64), /*requires_grad=*/true);
}

void require_gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                       const std::vector<Tensor>& inputs) {
  GradcheckResult r = gradcheck(f, inputs);
  INFO(r.report);
  CHECK(r.ok);
}

}  // namespace

TEST_CASE("CAM in the graph: the same maps as on arrays, one class per row", "[interpret]") {
  NDArray features = f64({1, 2, 3, 4, 0, 1, 0, -2,  // image 0: f_0, f_1
                          2, 0, 0, 1, 1, 1, 1, 1},  // image 1
                         {2, 2, 2, 2});
  NDArray weight = f64({0.5, 2, -1, 3}, {2, 2});
  const Tensor maps = class_activation_maps(Tensor(features), Tensor(weight), {0, 1});
  // Image 0, class 0: 0.5 f_0 + 2 f_1; image 1, class 1: -f_0 + 3 f_1.
  check_close(maps.data(), f64({0.5, 3, 1.5, -2, 1, 3, 3, 2}, {2, 2, 2}));
  check_close(maps.data(), class_activation_maps(features, weight, {0, 1}));
  CHECK_THAT(error_message([&] { class_activation_maps(Tensor(features), Tensor(weight), {0}); }),
             Contains("2 maps but 1 classes"));
  CHECK_THAT(error_message([&] {
               class_activation_maps(Tensor(features), Tensor(weight), {0, 2});
             }),
             Contains("class 2 is outside 0..1"));
}

TEST_CASE("scale_maps: ReLU, then each map over its own maximum", "[interpret]") {
  const Tensor maps(f64({-1, 2, 4, 1, 0, 0, 0, 0}, {2, 2, 2}));
  check_close(scale_maps(maps).data(), f64({0, 0.5, 1, 0.25, 0, 0, 0, 0}, {2, 2, 2}), 1e-8);
  CHECK_THAT(error_message([&] {
               scale_maps(Tensor(f64({1, 2}, {2})));
             }),
             Contains("scale_maps: expects maps [P, h, w]"));
}

TEST_CASE("upsample_maps: U A U^T is upsample_map, in the graph", "[interpret]") {
  Generator gen(3);
  for (auto [grid, size] : {std::pair<Index, Index>{4, 16}, {8, 64}, {3, 7}}) {
    const NDArray u = bilinear_matrix(grid, size);
    for (double row_sum : sum(u, 1).to_vector()) CHECK_THAT(row_sum, WithinAbs(1, 1e-12));
    NDArray a = NDArray::uniform({2, grid, grid}, gen, 0, 1, kFloat64);
    const NDArray up = upsample_maps(Tensor(a), size).data();
    REQUIRE(up.shape() == Shape{2, size, size});
    for (Index p = 0; p < 2; ++p)
      check_close(slice(up, 0, p, p + 1).reshape({size, size}),
                  upsample_map(slice(a, 0, p, p + 1).reshape({grid, grid}), size), 1e-12);
  }
}

TEST_CASE("soft mask, masked image and the two losses by hand", "[interpret]") {
  // T(A) = sigmoid(10 (A - 0.5)): 0.5 at the threshold, sigmoid(2) at 0.7.
  const Tensor maps(f64({0.5, 0.7, 0, 1}, {1, 2, 2}));
  const NDArray t = soft_mask(maps).data();
  check_close(t, f64({0.5, sigmoid_of(2), sigmoid_of(-5), sigmoid_of(5)}, {1, 2, 2}), 1e-12);
  CHECK_THAT(soft_mask(maps, {.sigma = 0.7, .omega = 1}).data().at({0, 0, 1}),
             WithinAbs(0.5, 1e-12));
  // I* = I - T . I = (1 - T) I on both channels.
  const Tensor images(f64({1, 2, 3, 4, 10, 10, 10, 10}, {1, 2, 2, 2}));
  const Tensor masks(f64({0, 0.5, 1, 0.25}, {1, 2, 2}));
  check_close(soft_erase(images, masks).data(), f64({1, 1, 0, 3, 10, 5, 0, 7.5}, {1, 2, 2, 2}),
              1e-12);
  // L_am = mean sigmoid(s): (sigmoid(0) + sigmoid(2)) / 2.
  CHECK_THAT(attention_mining_loss(Tensor(f64({0, 2}, {2}))).item(),
             WithinAbs((0.5 + sigmoid_of(2)) / 2, 1e-12));
  // L_e = mean (A - H)^2 = (0.25 + 0.09 + 0 + 1) / 4.
  CHECK_THAT(attention_extra_loss(maps, Tensor(f64({1, 1, 0, 0}, {1, 2, 2}))).item(),
             WithinAbs(1.34 / 4, 1e-12));
  CHECK_THAT(error_message([&] {
               soft_erase(images, Tensor(f64({1, 2}, {1, 1, 2})));
             }),
             Contains("soft_erase: needs images [P, C, H, W] and masks [P, H, W]"));
  CHECK_THAT(error_message([&] {
               attention_extra_loss(maps, reshape(masks, {1, 4}));
             }),
             Contains("must both be [P, H, W]"));
  CHECK_THAT(error_message([&] {
               attention_mining_loss(Tensor(f64({1, 2}, {1, 2})));
             }),
             Contains("one logit per pair [P]"));
}

TEST_CASE("box masks, attended regions and erasing them", "[interpret]") {
  check_close(box_mask({{1, 0, 3, 1}, {0, 2, 1, 3}}, 3), f64({0, 1, 1, 0, 0, 0, 1, 0, 0}, {3, 3}));
  const NDArray scaled = f64({0.2, 0.9, 0.5, 0.49}, {1, 2, 2});
  const NDArray regions = attended_regions(scaled, 0.5);
  check_close(regions, f64({0, 1, 1, 0}, {1, 2, 2}));
  const NDArray images = f64({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2});
  const std::vector<double> fill = {0.5, -1};
  check_close(erase_regions(images, regions, fill),
              f64({1, 0.5, 0.5, 4, 5, -1, -1, 8}, {1, 2, 2, 2}));
  check_close(images, f64({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}));  // a copy: not touched
  CHECK_THAT(error_message([&] { erase_regions(images, regions, std::vector<double>{1}); }),
             Contains("1 fill values for 2 channels"));
}

TEST_CASE("gradcheck: GAIN's pieces, float64", "[interpret][gradcheck]") {
  Generator gen(5);
  require_gradcheck(
      [](const std::vector<Tensor>& in) {
        return class_activation_maps(in[0], in[1], {1, 0});
      },
      {random_input({2, 3, 2, 2}, gen), random_input({2, 3}, gen)});
  // Values away from 0 (the ReLU's kink) and a clear maximum per map.
  require_gradcheck([](const std::vector<Tensor>& in) { return scale_maps(in[0]); },
                    {Tensor(f64({0.3, -0.6, 0.9, 0.2, -0.4, 0.7, 0.1, 0.5}, {2, 2, 2}), true)});
  require_gradcheck([](const std::vector<Tensor>& in) { return upsample_maps(in[0], 7); },
                    {random_input({2, 3, 3}, gen)});
  require_gradcheck([](const std::vector<Tensor>& in) { return soft_mask(in[0]); },
                    {random_input({2, 3, 3}, gen, 0, 1)});
  require_gradcheck([](const std::vector<Tensor>& in) { return soft_erase(in[0], in[1]); },
                    {random_input({2, 2, 3, 3}, gen), random_input({2, 3, 3}, gen, 0, 1)});
  require_gradcheck([](const std::vector<Tensor>& in) { return attention_mining_loss(in[0]); },
                    {random_input({4}, gen, -3, 3)});
  require_gradcheck(
      [](const std::vector<Tensor>& in) { return attention_extra_loss(in[0], in[1]); },
      {random_input({2, 3, 3}, gen), random_input({2, 3, 3}, gen)});
}

TEST_CASE("gradcheck: the mining loss through the soft mask into the map, float64",
          "[interpret][gradcheck]") {
  // The whole GAIN stream on 2 pairs: features and the head's weight -> CAM -> scaled ->
  // upsampled 2x2 -> 6x6 -> soft mask -> masked images -> a fixed linear "classifier" of the
  // masked pixels -> L_am; and L_e against box masks. Every input gets its gradient, the map's
  // through the mask.
  Generator gen(11);
  // Positive features and weights: every cell of the CAM is positive, so the scaled map varies
  // with every input (with one positive cell it would be 1 there and 0 elsewhere, whatever the
  // values, and every gradient 0: a gradcheck that could not fail).
  const Tensor features = random_input({2, 3, 2, 2}, gen, 0.1, 1);
  const Tensor weight = random_input({2, 3}, gen, 0.1, 1);
  const Tensor images = random_input({2, 2, 6, 6}, gen, 0, 1);
  const Tensor reader(NDArray::uniform({1, 2, 6, 6}, gen, -1, 1, kFloat64));
  const Tensor boxes(
      stack(std::vector<NDArray>{box_mask({{1, 1, 4, 4}}, 6), box_mask({{2, 0, 6, 3}}, 6)}, 0)
          .to(kFloat64));
  auto maps_of = [](const std::vector<Tensor>& in) {
    return upsample_maps(scale_maps(class_activation_maps(in[0], in[1], {0, 1})), 6);
  };
  require_gradcheck(
      [&](const std::vector<Tensor>& in) {
        const Tensor masked = soft_erase(in[2], soft_mask(maps_of(in)));
        const Tensor logits = sum(reshape(masked * reader, {2, -1}), 1);
        return attention_mining_loss(logits);
      },
      {features, weight, images});
  require_gradcheck(
      [&](const std::vector<Tensor>& in) { return attention_extra_loss(maps_of(in), boxes); },
      {features, weight});
  // The map really is on the path: L_am's gradients reach the features and the weight (fresh
  // leaves, so that nothing the gradchecks did is counted).
  const Tensor f(features.data(), true), w(weight.data(), true);
  const Tensor masked = soft_erase(images, soft_mask(maps_of({f, w, images})));
  attention_mining_loss(sum(reshape(masked * reader, {2, -1}), 1)).backward();
  CHECK(max(abs(f.grad().data())).item() > 1e-3);
  CHECK(max(abs(w.grad().data())).item() > 1e-3);
}
