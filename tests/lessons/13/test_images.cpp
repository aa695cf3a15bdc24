// Lesson 13, part 1: the ViT on canvases and its maps. The randomisation of the sanity checks
// changes exactly the weights of each step; every map comes from the model's own tensors;
// batched curves equal one forward per mask; a float64 gradcheck of the lesson's model
// (gradcheck's defaults: eps 1e-6, |analytic - numeric| <= 1e-5 + 1e-3 |numeric|). The
// methods' maths by hand: tests/interpret/.
#include <cmath>

#include "lessons/13_reading_attention/images.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson13;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// 16x16 images in 4x4 patches: a 4x4 grid, 17 tokens.
nn::VisionTransformerConfig tiny(Index layers = 2) {
  return {.image_size = 16,
          .patch_size = 4,
          .in_channels = 3,
          .num_layers = layers,
          .num_heads = 2,
          .hidden_dim = 8,
          .mlp_dim = 12,
          .num_classes = 3,
          .need_weights = false};
}

constexpr vision::PixelStatistics kPixels{.mean = 0.2, .std = 0.5};

// Every parameter moved by noise, as training would: no value left at its initialiser's.
void perturb(nn::Module& model, Generator& gen) {
  for (auto& [name, p] : model.named_parameters())
    p.data() = p.data() + NDArray::normal(p.shape(), gen, 0, 0.1, p.dtype());
}

bool same_values(const Tensor& a, const Tensor& b) {
  return a.data().to_vector() == b.data().to_vector();
}

data::CanvasObject object(Index label, data::Box box) {
  data::CanvasObject o;
  o.label = label;
  o.box = box;
  return o;
}

}  // namespace

TEST_CASE("cascading randomisation changes exactly the weights of each step", "[lesson13]") {
  Generator g1(1), g2(2), noise(3);
  CanvasVit trained(tiny(3), kPixels, g1), fresh(tiny(3), kPixels, g2), model(tiny(3), kPixels, g1);
  perturb(trained, noise);
  CHECK(copy_parameters(model, trained) == static_cast<Index>(trained.named_parameters().size()));
  const std::vector<CascadeStep> steps = cascade_steps(model);
  REQUIRE(steps.size() == 2 + 3 + 2);
  CHECK(steps[0].prefixes == std::vector<std::string>{"vit.heads"});
  CHECK(steps[2].prefixes == std::vector<std::string>{"vit.layers.2"});
  CHECK(steps.back().prefixes == std::vector<std::string>{"vit.conv_proj"});
  const auto trained_params = trained.named_parameters(), fresh_params = fresh.named_parameters();
  const auto params = model.named_parameters();
  std::vector<int> step_of(params.size(), -1);  // the step that randomises each parameter
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const Index copied = copy_parameters(model, fresh, steps[k].prefixes);
    CHECK(copied > 0);
    for (std::size_t i = 0; i < params.size(); ++i) {
      INFO("step " << k << " (" << steps[k].name << "), parameter " << params[i].first);
      const bool now = same_values(params[i].second, fresh_params[i].second);
      if (now && step_of[i] < 0) step_of[i] = static_cast<int>(k);
      // Randomised at this step or before: the fresh values; all others: still trained.
      CHECK(now == (step_of[i] >= 0));
      if (!now) CHECK(same_values(params[i].second, trained_params[i].second));
    }
  }
  // Every parameter belongs to exactly one step, and the order runs from the top down.
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO(params[i].first);
    CHECK(step_of[i] >= 0);
  }
  CHECK(step_of[0] == 5);  // vit.class_token: with the positions, the second-last step
}

TEST_CASE("copy_parameters: a prefix is a whole dotted component", "[lesson13]") {
  Generator g1(4), g2(5), noise(6);
  CanvasVit a(tiny(11), kPixels, g1), b(tiny(11), kPixels, g2);
  perturb(a, noise);
  // layers.1 is one layer's 12 tensors; layers.10 must not come with it.
  CHECK(copy_parameters(a, b, {"vit.layers.1"}) == 12);
  CHECK(same_values(a.vit.layers[1]->linear1.weight, b.vit.layers[1]->linear1.weight));
  CHECK(!same_values(a.vit.layers[10]->linear1.weight, b.vit.layers[10]->linear1.weight));
  nn::VisionTransformerConfig other = tiny(2);
  other.hidden_dim = 4;
  CanvasVit c(other, kPixels, g2);
  CHECK_THAT(error_message([&] { copy_parameters(a, c); }),
             Contains("no parameter of that name and shape"));
}

TEST_CASE("vit_maps: every attention map is read from the model's own weights", "[lesson13]") {
  Generator gen(7), data(8);
  CanvasVit model(tiny(), kPixels, gen);
  model.eval();
  const NDArray images = NDArray::uniform({3, 3, 16, 16}, data);
  const std::vector<Index> classes = {0, 2, 1};
  const MapBatch maps = vit_maps(model, images, classes, {true, false, true});
  REQUIRE(maps.maps.size() == static_cast<std::size_t>(method_count(2)));
  CHECK(!model.vit.config().need_weights);  // switched back off
  model.vit.set_need_weights(true);
  model(Tensor(images));
  const std::vector<Tensor> weights = model.vit.attention_weights();
  for (Index b = 0; b < 3; ++b) {
    std::vector<NDArray> layers;
    for (const Tensor& w : weights) layers.push_back(squeeze(slice(w.data(), 0, b, b + 1), 0));
    const NDArray rollout = interpret::attention_rollout(layers);
    for (Index patch = 0; patch < 16; ++patch) {
      const Index y = patch / 4, x = patch % 4;
      const double head0 = layers.back().at({0, 0, 1 + patch}),
                   head1 = layers.back().at({1, 0, 1 + patch});
      CHECK_THAT(maps.maps[kMethods].at({b, y, x}), WithinAbs(head0, 1e-6));
      CHECK_THAT(maps.maps[kMethods + 1].at({b, y, x}), WithinAbs(head1, 1e-6));
      CHECK_THAT(maps.maps[kRawMean].at({b, y, x}), WithinAbs((head0 + head1) / 2, 1e-6));
      CHECK_THAT(maps.maps[kRollout].at({b, y, x}), WithinAbs(rollout.at({0, 1 + patch}), 1e-6));
    }
  }
  CHECK(maps.maps[kGradCam].shape() == Shape{3, 4, 4});
  CHECK(maps.maps[kGradient].shape() == Shape{3, 16, 16});
  CHECK(maps.maps[kInputGradient].shape() == Shape{3, 16, 16});
  // Flow only where asked; its row sums to 1 without the class token's own share.
  CHECK(max(abs(map_of(maps.maps[kFlow], 1))).item() == 0);
  CHECK(sum(map_of(maps.maps[kFlow], 0)).item() > 0.1);
  CHECK(max(map_of(maps.maps[kRelevance], 0)).item() > 0);
}

TEST_CASE("vit_maps: an image's maps do not depend on the rest of the batch", "[lesson13]") {
  Generator gen(9), data(10);
  CanvasVit model(tiny(), kPixels, gen);
  model.eval();
  const NDArray images = NDArray::uniform({2, 3, 16, 16}, data);
  const MapBatch both = vit_maps(model, images, {1, 2});
  const MapBatch second = vit_maps(model, slice(images, 0, 1, 2), {2});
  for (Index row = 0; row < method_count(2); ++row) {
    if (!both.maps[static_cast<std::size_t>(row)].defined()) continue;
    INFO(method_name(row));
    check_close(map_of(both.maps[static_cast<std::size_t>(row)], 1),
                map_of(second.maps[static_cast<std::size_t>(row)], 0), 1e-5);
  }
}

TEST_CASE("model_maps: a few images at a time, the maps of the whole batch at once", "[lesson13]") {
  // 13 images: two parts of 10 and 3. Flow on images 0 and 4 only, so the second part has no
  // flow map of its own (0 there, as vit_maps leaves the flow maps it does not compute).
  Generator gen(9), data(10);
  CanvasVit vit(tiny(), kPixels, gen);
  vision::CamClassifier cnn({.channels1 = 4, .channels2 = 4, .channels3 = 4}, 3, gen);
  vit.eval();
  cnn.eval();
  const NDArray images = NDArray::uniform({13, 3, 16, 16}, data);
  std::vector<Index> classes;
  std::vector<bool> flow(13, false);
  for (Index i = 0; i < 13; ++i) classes.push_back(i % 3);
  flow[0] = flow[4] = true;
  MapBatch whole = vit_maps(vit, images, classes, flow);
  add_cnn_maps(whole, cnn, images, classes);
  const MapBatch parts = model_maps(vit, cnn, images, classes, flow);
  REQUIRE(parts.maps.size() == whole.maps.size());
  Index compared = 0;
  for (std::size_t row = 0; row < whole.maps.size(); ++row) {
    INFO(method_name(static_cast<Index>(row)));
    REQUIRE(parts.maps[row].defined() == whole.maps[row].defined());
    if (!whole.maps[row].defined()) continue;
    REQUIRE(parts.maps[row].shape() == whole.maps[row].shape());
    check_close(parts.maps[row], whole.maps[row], 1e-5);
    ++compared;
  }
  CHECK(compared == method_count(2) - 2);  // all but the two baselines (add_baseline_maps)
  CHECK(max(abs(map_of(parts.maps[kFlow], 12))).item() == 0);
  CHECK(sum(map_of(parts.maps[kFlow], 4)).item() > 0.1);
}

TEST_CASE("edge_maps: central differences of the brightness", "[lesson13]") {
  NDArray image = NDArray::zeros({1, 3, 4, 4});
  for (Index c = 0; c < 3; ++c)
    for (Index y = 0; y < 4; ++y)
      for (Index x = 2; x < 4; ++x) image.set({0, c, y, x}, 0.6);
  const NDArray edges = edge_maps(image);
  // Columns 1 and 2 straddle the step: (0.6 - 0) / 2; columns 0 and 3 see no change.
  for (Index y = 0; y < 4; ++y) {
    CHECK_THAT(edges.at({0, y, 0}), WithinAbs(0, 1e-12));
    CHECK_THAT(edges.at({0, y, 1}), WithinAbs(0.3, 1e-6));
    CHECK_THAT(edges.at({0, y, 2}), WithinAbs(0.3, 1e-6));
    CHECK_THAT(edges.at({0, y, 3}), WithinAbs(0, 1e-12));
  }
}

TEST_CASE("patch_relevance and keep_patches by hand", "[lesson13]") {
  const NDArray map = f64({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {4, 4});
  CHECK(patch_relevance(map, 2) == std::vector<double>{14, 22, 46, 54});
  CHECK(patch_relevance(map, 4) == map.to_vector());
  CHECK_THAT(error_message([&] { patch_relevance(map, 3); }), Contains("multiple of the 3x3"));
  const NDArray image = NDArray::ones({3, 4, 4});
  const NDArray kept = keep_patches(image, {true, false, false, true}, 2, 0.25);
  CHECK(kept.at({0, 0, 0}) == 1);
  CHECK(kept.at({2, 1, 3}) == 0.25);  // patch 1: rows 0-1, columns 2-3
  CHECK(kept.at({1, 2, 1}) == 0.25);  // patch 2
  CHECK(kept.at({1, 3, 3}) == 1);
}

TEST_CASE("perturbation_curves: batched scores equal one forward per mask", "[lesson13]") {
  Generator gen(11), data(12);
  CanvasVit model(tiny(), kPixels, gen);
  model.eval();
  const NDArray image = NDArray::uniform({3, 16, 16}, data);
  std::vector<std::vector<double>> relevance = {
      NDArray::uniform({16}, data).to_vector(), {}, NDArray::uniform({16}, data).to_vector()};
  const std::vector<CurvePair> curves = perturbation_curves(model, image, 1, relevance, 4, 0.2, 5);
  REQUIRE(curves.size() == 3);
  CHECK(curves[1].deletion.score.empty());
  auto direct = [&](const std::vector<bool>& kept) {
    NoGradGuard no_graph;
    const NDArray x = keep_patches(image, kept, 4, 0.2).reshape({1, 3, 16, 16});
    return 1 / (1 + std::exp(-model(Tensor(x)).data().at({0, 1})));
  };
  for (std::size_t r : {0u, 2u}) {
    const auto deletion = interpret::deletion_curve(relevance[r], direct, 5);
    const auto insertion = interpret::insertion_curve(relevance[r], direct, 5);
    CHECK_THAT(curves[r].deletion.auc, WithinAbs(deletion.auc, 1e-6));
    CHECK_THAT(curves[r].insertion.auc, WithinAbs(insertion.auc, 1e-6));
    REQUIRE(curves[r].deletion.score.size() == 6);
  }
}

TEST_CASE("with_shuffled_labels and classes_on_canvases", "[lesson13]") {
  vision::CanvasSet set;
  set.images = NDArray::zeros({4, 3, 8, 8});
  set.labels = NDArray::from_list({1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0}, {4, 3}, kFloat32);
  set.objects = {{object(0, {0, 0, 2, 2})},
                 {object(1, {0, 0, 2, 2}), object(2, {4, 4, 6, 6})},
                 {object(2, {0, 0, 2, 2})},
                 {object(0, {0, 0, 2, 2})}};
  const std::vector<vision::ClassOnCanvas> pairs = vision::classes_on_canvases(set);
  REQUIRE(pairs.size() == 5);
  CHECK((pairs[1].canvas == 1 && pairs[1].label == 1 && pairs[2].label == 2));
  const vision::CanvasSet shuffled = with_shuffled_labels(set, 3);
  CHECK(shuffled.images.shares_memory_with(set.images));
  // The same rows, in another order: each class keeps its count.
  CHECK(vision::class_counts(shuffled) == vision::class_counts(set));
  CHECK(shuffled.labels.to_vector() != set.labels.to_vector());
}

TEST_CASE("gradcheck: the lesson's ViT (standardised input), float64", "[lesson13][gradcheck]") {
  Generator gen(13), data(14);
  nn::VisionTransformerConfig config = tiny();
  config.image_size = 8;
  CanvasVit model(config, kPixels, gen);
  model.to(kFloat64);
  const Tensor images = Tensor(NDArray::uniform({2, 3, 8, 8}, data, 0, 1, kFloat64), true);
  auto result =
      gradcheck([&](const std::vector<Tensor>& in) { return model(in[0]); },
                with_parameters({images}, model), {.max_elements_per_input = 16, .seed = 15});
  INFO(result.report);
  CHECK(result.ok);
}

TEST_CASE("score_methods on tiny synthetic canvases: every row scored", "[lesson13]") {
  vision::CanvasData d = vision::make_canvas_data(
      {.train = 4, .validation = 2, .test = 5, .seed = 1, .synthetic = true, .canvas_size = 64});
  Generator gen(16);
  nn::VisionTransformerConfig config = tiny();
  config.image_size = 64;
  config.patch_size = 8;
  config.num_classes = static_cast<Index>(d.class_names.size());
  CanvasVit vit(config, kPixels, gen);
  vision::CamClassifier cnn({.in_channels = 3, .channels1 = 2, .channels2 = 3, .channels3 = 4},
                            config.num_classes, gen);
  const ImageScores s = score_methods(
      vit, cnn, d.test, {.flow_canvases = 2, .curve_pairs = 3, .curve_steps = 4, .batch = 4});
  const auto pairs = static_cast<Index>(s.pairs.size());
  REQUIRE(s.methods.size() == static_cast<std::size_t>(method_count(2)));
  Index flow_pairs = 0, flow_curves = 0;  // pairs on the first 2 canvases; among the first 3
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    flow_pairs += s.pairs[p].canvas < 2;
    flow_curves += s.pairs[p].canvas < 2 && p < 3;
  }
  for (Index row = 0; row < method_count(2); ++row) {
    INFO(method_name(row));
    const MethodScore& m = s.methods[static_cast<std::size_t>(row)];
    CHECK(m.pairs == (row == kFlow ? flow_pairs : pairs));
    CHECK(m.curves == (row == kFlow ? flow_curves : 3));
    CHECK(m.deletion_curve.size() == 5);
    CHECK((m.deletion >= 0 && m.deletion <= 1 && m.insertion >= 0 && m.insertion <= 1));
  }
  CHECK(s.fill == kPixels.mean);
}

// ---- exercise checks (docs/13_reading_attention.md)
// ----------------------------------------------------

TEST_CASE("exercise check: Grad-CAM on tokens reads a layer whose gradient reaches the logits",
          "[lesson13]") {
  // z_L's patch tokens never reach the class token (nn/vision_transformer.h): Grad-CAM on them
  // would be ReLU(0) = 0 everywhere. On z_{L-1} the maps of four random images are not all 0.
  Generator gen(17), data(18);
  CanvasVit model(tiny(), kPixels, gen);
  model.eval();
  const MapBatch maps = vit_maps(model, NDArray::uniform({4, 3, 16, 16}, data), {0, 1, 2, 0});
  CHECK(max(maps.maps[kGradCam]).item() > 0);
}

TEST_CASE("exercise check: |x * g| keeps the zeros of x, whatever the gradient", "[lesson13]") {
  // A canvas is mostly black: x = 0 on 90% of the pixels. Two unrelated gradients g1, g2 give
  // input x gradient maps whose absolute values share those zeros.
  Generator gen(19);
  const std::vector<double> noise = NDArray::uniform({1000}, gen, 0, 1, kFloat64).to_vector();
  const std::vector<double> g1 = NDArray::normal({1000}, gen, 0, 1, kFloat64).to_vector();
  const std::vector<double> g2 = NDArray::normal({1000}, gen, 0, 1, kFloat64).to_vector();
  std::vector<double> a, b;
  for (std::size_t i = 0; i < noise.size(); ++i) {
    const double x = i % 10 == 0 ? 0.2 + 0.8 * noise[i] : 0.0;
    a.push_back(x * g1[i]);
    b.push_back(x * g2[i]);
  }
  const double rho_abs = interpret::spearman_correlation(a, b, /*absolute=*/true);
  const double rho_signed = interpret::spearman_correlation(a, b, /*absolute=*/false);
  INFO("|rho| " << rho_abs << ", signed rho " << rho_signed);
  CHECK(rho_abs > 0.95);
  CHECK(std::abs(rho_signed) < 0.2);
}
