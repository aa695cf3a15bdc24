// nn::VisionTransformer: torchvision's names, the patch embedding as a flatten + linear, the
// attention weights and hidden states in the graph, shape errors, and a float64 gradcheck of
// a tiny model (gradcheck's defaults: eps 1e-6, |analytic - numeric| <= 1e-5 + 1e-3 |numeric|).
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// 4x4 images of 2 channels in 2x2 patches: a 2x2 grid, N = 4 patches, T = 5 tokens.
nn::VisionTransformerConfig tiny() {
  return {.image_size = 4,
          .patch_size = 2,
          .in_channels = 2,
          .num_layers = 2,
          .num_heads = 2,
          .hidden_dim = 4,
          .mlp_dim = 6,
          .num_classes = 3};
}

}  // namespace

TEST_CASE("VisionTransformer: shapes and torchvision's parameter names", "[nn][vit]") {
  Generator gen(0), data(1);
  nn::VisionTransformer vit(tiny(), gen);
  CHECK(vit.grid() == 2);
  CHECK(vit.num_patches() == 4);
  CHECK(vit.num_tokens() == 5);
  std::vector<std::string> names;
  for (auto& [name, _] : vit.named_parameters()) names.push_back(name);
  REQUIRE(names.size() == 1 + 2 + 1 + 2 * 12 + 2 + 2);
  CHECK(names[0] == "class_token");
  CHECK(names[1] == "pos_embedding");  // a module's own parameters come before its children's
  CHECK(names[2] == "conv_proj.weight");
  CHECK(names[4] == "layers.0.self_attn.in_proj_weight");
  CHECK(names[16] == "layers.1.self_attn.in_proj_weight");
  CHECK(names[28] == "ln.weight");
  CHECK(names[30] == "heads.weight");
  CHECK(vit.pos_embedding.shape() == Shape{1, 5, 4});
  CHECK(vit.class_token.shape() == Shape{1, 1, 4});
  CHECK(vit.conv_proj.weight.shape() == Shape{4, 2, 2, 2});

  const Tensor images = randn({3, 2, 4, 4}, data);
  const Tensor logits = vit(images);
  CHECK(logits.shape() == Shape{3, 3});
  CHECK(vit.patch_tokens.shape() == Shape{3, 4, 4});
  REQUIRE(vit.hidden_states.size() == 3);
  for (const Tensor& h : vit.hidden_states) CHECK(h.shape() == Shape{3, 5, 4});
  const std::vector<Tensor> weights = vit.attention_weights();
  REQUIRE(weights.size() == 2);
  for (const Tensor& w : weights) {
    REQUIRE(w.shape() == Shape{3, 2, 5, 5});
    // Softmax rows: each query's weights over the keys sum to 1.
    check_close(sum(w, -1).data(), NDArray::ones({3, 2, 5}), 1e-6);
  }
}

TEST_CASE("VisionTransformer: the patch embedding is flatten + linear, patches row-major",
          "[nn][vit]") {
  Generator gen(2), data(3);
  nn::VisionTransformer vit(tiny(), gen);
  vit.to(kFloat64);
  vit.conv_proj.bias.data() = randn({4}, data, kFloat64).data();
  const Tensor images = randn({2, 2, 4, 4}, data, kFloat64);
  const NDArray tokens = vit.embed_patches(images).data();  // [2, 4, 4]
  // E = weight reshaped to [D, C P^2]; patch (r, c) = pixels (channel, 2r + u, 2c + v).
  const NDArray e = vit.conv_proj.weight.data().reshape({4, 8});
  for (Index b = 0; b < 2; ++b)
    for (Index r = 0; r < 2; ++r)
      for (Index c = 0; c < 2; ++c) {
        std::vector<double> patch;
        for (Index ch = 0; ch < 2; ++ch)
          for (Index u = 0; u < 2; ++u)
            for (Index v = 0; v < 2; ++v)
              patch.push_back(images.data().at({b, ch, 2 * r + u, 2 * c + v}));
        for (Index d = 0; d < 4; ++d) {
          double expected = vit.conv_proj.bias.data().at({d});
          for (Index k = 0; k < 8; ++k)
            expected += e.at({d, k}) * patch[static_cast<std::size_t>(k)];
          CHECK_THAT(tokens.at({b, 2 * r + c, d}), Catch::Matchers::WithinAbs(expected, 1e-12));
        }
      }
}

TEST_CASE("VisionTransformer: initialisation as torchvision, the head as nn::Linear", "[nn][vit]") {
  Generator gen(4);
  nn::VisionTransformer vit(tiny(), gen);
  check_close(vit.class_token.data(), NDArray::zeros({1, 1, 4}), 0);
  check_close(vit.conv_proj.bias.data(), NDArray::zeros({4}), 0);
  check_close(vit.ln.weight.data(), NDArray::ones({4}), 0);
  // Not zero (torchvision's): a zero head would zero every gradient below it.
  CHECK(max(abs(vit.heads.weight.data())).item() > 0);
  // E_pos ~ N(0, 0.02^2): nothing near 10 standard deviations.
  CHECK(max(abs(vit.pos_embedding.data())).item() < 0.2);
}

TEST_CASE("VisionTransformer: attention and hidden states are in the graph", "[nn][vit]") {
  Generator gen(5), data(6);
  nn::VisionTransformer vit(tiny(), gen);
  vit.to(kFloat64);
  const Tensor images = Tensor(randn({2, 2, 4, 4}, data, kFloat64).data(), true);
  const Tensor logits = vit(images);
  std::vector<Tensor> weights = vit.attention_weights();
  for (Tensor& w : weights) w.retain_grad();
  for (Tensor& h : vit.hidden_states) h.retain_grad();
  vit.patch_tokens.retain_grad();
  sum(slice(logits, 1, 1, 2)).backward();  // the class-1 logits of both images
  for (const Tensor& w : weights) {
    REQUIRE(w.grad().defined());
    CHECK(max(abs(w.grad().data())).item() > 0);
  }
  REQUIRE(vit.patch_tokens.grad().defined());
  REQUIRE(images.grad().defined());
  CHECK(images.grad().shape() == Shape{2, 2, 4, 4});
  // Only the class token is classified after the last attention: the last layer's output
  // patch tokens get no gradient, its input's do (Grad-CAM must read z_{L-1}).
  const NDArray last = vit.hidden_states.back().grad().data();
  CHECK(max(abs(slice(last, 1, 1, 5))).item() == 0);
  CHECK(max(abs(slice(last, 1, 0, 1))).item() > 0);
  const NDArray before_last = vit.hidden_states[1].grad().data();
  CHECK(max(abs(slice(before_last, 1, 1, 5))).item() > 0);
}

TEST_CASE("VisionTransformer: images do not see each other in a batch", "[nn][vit]") {
  Generator gen(7), data(8);
  nn::VisionTransformer vit(tiny(), gen);
  const Tensor images = randn({2, 2, 4, 4}, data);
  const NDArray both = vit(images).data();
  const NDArray first = vit(Tensor(slice(images.data(), 0, 0, 1))).data();
  check_close(slice(both, 0, 0, 1), first, 1e-5);
}

TEST_CASE("VisionTransformer: need_weights off takes the fused path, same logits", "[nn][vit]") {
  Generator gen(9), data(10);
  nn::VisionTransformerConfig config = tiny();
  config.need_weights = false;
  nn::VisionTransformer vit(config, gen);
  const Tensor images = randn({2, 2, 4, 4}, data);
  const NDArray fused = vit(images).data();
  CHECK_THAT(error_message([&] { vit.attention_weights(); }), Contains("need_weights"));
  vit.set_need_weights(true);
  check_close(vit(images).data(), fused, 1e-5);
  CHECK(vit.attention_weights().size() == 2);
}

TEST_CASE("VisionTransformer: bad shapes and configurations name the problem", "[nn][vit]") {
  Generator gen(11);
  nn::VisionTransformer vit(tiny(), gen);
  CHECK_THAT(error_message([&] {
               vit(zeros({1, 2, 6, 6}));
             }),
             Contains("VisionTransformer: expects images [B, 2, 4, 4], got [1,2,6,6]"));
  CHECK_THAT(error_message([&] { vit(zeros({1, 3, 4, 4})); }), Contains("got [1,3,4,4]"));
  CHECK_THAT(error_message([&] { vit(zeros({2, 4, 4})); }), Contains("got [2,4,4]"));
  CHECK_THAT(error_message([&] {
               vit.forward_patches(zeros({1, 5, 4}));
             }),
             Contains("expects patch tokens [B, 4, 4], got [1,5,4]"));
  nn::VisionTransformerConfig bad = tiny();
  bad.patch_size = 3;
  CHECK_THAT(error_message([&] { nn::VisionTransformer v(bad, gen); }),
             Contains("image_size 4 must be a positive multiple of patch_size 3"));
  bad = tiny();
  bad.num_heads = 3;
  CHECK_THAT(error_message([&] { nn::VisionTransformer v(bad, gen); }),
             Contains("hidden_dim 4 must be a positive multiple of num_heads 3"));
}

TEST_CASE("gradcheck: VisionTransformer, images and every parameter", "[nn][gradcheck]") {
  Generator gen(12), data(13);
  nn::VisionTransformer vit(tiny(), gen);
  vit.to(kFloat64);
  // A class token and biases away from 0, so that their gradients are not checked at a
  // special point.
  vit.class_token.data() = randn({1, 1, 4}, data, kFloat64).data();
  vit.conv_proj.bias.data() = randn({4}, data, kFloat64).data();
  const Tensor images = randn({2, 2, 4, 4}, data, kFloat64).requires_grad_();
  auto result =
      gradcheck([&](const std::vector<Tensor>& in) { return vit(in[0]); },
                with_parameters({images}, vit), {.max_elements_per_input = 24, .seed = 14});
  INFO(result.report);
  CHECK(result.ok);
}
