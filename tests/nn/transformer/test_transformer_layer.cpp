// nn::TransformerEncoderLayer and nn::TransformerDecoderLayer: post- and pre-norm by hand,
// causality, the key/value cache, float64 gradchecks (gradcheck's defaults: eps 1e-6,
// |analytic - numeric| <= 1e-5 + 1e-3 |numeric|).
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using attend::testing::check_close;
using attend::testing::f64;
using Catch::Matchers::Contains;

namespace {

// Zero every Linear and projection: each sub-layer then outputs exactly 0.
void silence(nn::Module& layer) {
  for (auto& [name, p] : layer.named_parameters())
    if (name.find("norm") == std::string::npos) p.data() = NDArray::zeros_like(p.data());
}

nn::TransformerLayerOptions small(bool norm_first, double dropout = 0) {
  return {.dim_feedforward = 8,
          .dropout = dropout,
          .activation = nn::Activation::gelu,
          .batch_first = true,
          .norm_first = norm_first};
}

}  // namespace

TEST_CASE("Transformer layers: PyTorch's parameter names", "[nn][transformer]") {
  nn::TransformerDecoderLayer layer(4, 2, small(false));
  std::vector<std::string> names;
  for (auto& [name, _] : layer.named_parameters()) names.push_back(name);
  CHECK(names ==
        std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                 "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                                 "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                                 "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias",
                                 "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                                 "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
                                 "norm3.weight", "norm3.bias"});
}

TEST_CASE("Transformer layers: post-norm vs pre-norm by hand", "[nn][transformer]") {
  // With every sub-layer silenced (output 0), pre-norm gives x back, and post-norm gives x
  // normalised once per sub-layer: twice in an encoder layer, three times in a decoder layer.
  // A row [a - d, a + d] normalises to [-r, r] with r = d / sqrt(d^2 + eps).
  auto normalised = [](double d, int times) {
    for (int i = 0; i < times; ++i) d = d / std::sqrt(d * d + 1e-5);
    return d;
  };
  Tensor x(f64({1, 3, -2, 2}, {1, 2, 2}));  // rows with d = 1 and d = 2
  for (bool norm_first : {false, true}) {
    nn::TransformerEncoderLayer enc(2, 1, small(norm_first));
    nn::TransformerDecoderLayer dec(2, 2, small(norm_first));
    enc.to(kFloat64);
    dec.to(kFloat64);
    silence(enc);
    silence(dec);
    for (auto [layers, times] : {std::pair{0, 2}, std::pair{1, 3}}) {
      const double r1 = normalised(1, times), r2 = normalised(2, times);
      NDArray expected = norm_first ? x.data() : f64({-r1, r1, -r2, r2}, {1, 2, 2});
      Tensor y = layers == 0 ? enc(x) : dec(x, x);
      check_close(y.data(), expected, 1e-12);
    }
  }
}

TEST_CASE("Transformer layers: causal encoder layer does not leak the future",
          "[nn][transformer]") {
  Generator gen(0), data(1);
  nn::TransformerEncoderLayer layer(8, 2, small(true), gen);
  Tensor x = randn({2, 5, 8}, data);
  Tensor before = layer(x, {}, {}, /*is_causal=*/true);
  NDArray changed = x.data().clone();
  for (Index d = 0; d < 8; ++d) changed.set({0, 3, d}, -5.0 + d);
  Tensor after = layer(Tensor(changed), {}, {}, true);
  check_close(slice(after, 1, 0, 3).data(), slice(before, 1, 0, 3).data(), 0);
  check_close(slice(after, 0, 1, 2).data(), slice(before, 0, 1, 2).data(), 0);
}

TEST_CASE("Transformer layers: forward_step with a cache equals full recomputation",
          "[nn][transformer]") {
  Generator gen(2), data(3);
  for (bool norm_first : {false, true}) {
    nn::TransformerEncoderLayer enc(8, 2, small(norm_first), gen);
    nn::TransformerDecoderLayer dec(8, 2, small(norm_first), gen);
    enc.to(kFloat64);
    dec.to(kFloat64);
    Tensor x = randn({2, 4, 8}, data, kFloat64), memory = randn({2, 3, 8}, data, kFloat64);
    Tensor padding(f64({0, 0, 0, 0, 0, 1}, {2, 3}));
    Tensor full_enc = enc(x, {}, {}, true);
    Tensor full_dec = dec(
        x, memory, {.memory_key_padding_mask = nn::Mask::blocked(padding), .tgt_is_causal = true});
    nn::KeyValueCache enc_cache;
    nn::DecoderLayerCache dec_cache = dec.start_decoding(memory, nn::Mask::blocked(padding));
    for (Index t = 0; t < 4; ++t) {
      Tensor step = slice(x, 1, t, t + 1);
      check_close(enc.forward_step(step, enc_cache).data(), slice(full_enc, 1, t, t + 1).data(),
                  1e-12);
      check_close(dec.forward_step(step, dec_cache).data(), slice(full_dec, 1, t, t + 1).data(),
                  1e-12);
    }
    CHECK(dec.cross_attention_weights.data().at({1, 0, 0, 2}) == 0.0);
  }
}

TEST_CASE("Transformer layers: dropout only in training", "[nn][transformer]") {
  Generator gen(4), data(5);
  nn::TransformerEncoderLayer layer(8, 2, small(false, 0.5), gen);
  Tensor x = randn({1, 3, 8}, data);
  layer.eval();
  check_close(layer(x).data(), layer(x).data(), 0);
  layer.train();
  Tensor a = layer(x), b = layer(x);
  CHECK(a.data().to_vector() != b.data().to_vector());
}

TEST_CASE("Transformer layers: bad options and inputs give clear errors", "[nn][transformer]") {
  CHECK_THROWS_WITH(nn::TransformerEncoderLayer(6, 4),
                    Contains("embed_dim 6") && Contains("num_heads 4"));
  CHECK_THROWS_WITH(nn::TransformerEncoderLayer(4, 2, {.dropout = 1.5}), Contains("dropout"));
  CHECK_THROWS_WITH(nn::activation_from_name("swish"), Contains("swish"));
  nn::TransformerEncoderLayer layer(4, 2, small(false));
  CHECK_THROWS_WITH(layer(zeros({2, 3, 4}), nn::Mask::blocked(zeros({4, 4}))),
                    Contains("attn_mask") && Contains("[4,4]"));
}

TEST_CASE("gradcheck: TransformerEncoderLayer, post- and pre-norm, with masks", "[nn][gradcheck]") {
  Generator gen(6), data(7);
  for (auto activation : {nn::Activation::relu, nn::Activation::gelu, nn::Activation::gelu_tanh}) {
    for (bool norm_first : {false, true}) {
      nn::TransformerLayerOptions options = small(norm_first);
      options.activation = activation;
      nn::TransformerEncoderLayer layer(4, 2, options, gen);
      layer.to(kFloat64);
      Tensor x = randn({2, 3, 4}, data, kFloat64).requires_grad_();
      Tensor padding(f64({0, 0, 0, 0, 0, 1}, {2, 3}));
      auto result = gradcheck(
          [&](const std::vector<Tensor>& in) {
            return layer(in[0], {}, nn::Mask::blocked(padding), /*is_causal=*/true);
          },
          with_parameters({x}, layer));
      INFO("norm_first " << norm_first << "\n" << result.report);
      CHECK(result.ok);
    }
  }
}

TEST_CASE("gradcheck: TransformerDecoderLayer, post- and pre-norm, with masks", "[nn][gradcheck]") {
  Generator gen(8), data(9);
  for (bool norm_first : {false, true}) {
    nn::TransformerDecoderLayer layer(4, 2, small(norm_first), gen);
    layer.to(kFloat64);
    Tensor tgt = randn({2, 3, 4}, data, kFloat64).requires_grad_();
    Tensor memory = randn({2, 4, 4}, data, kFloat64).requires_grad_();
    Tensor padding(f64({0, 0, 0, 1, 0, 0, 0, 0}, {2, 4}));
    auto result = gradcheck(
        [&](const std::vector<Tensor>& in) {
          return layer(
              in[0], in[1],
              {.memory_key_padding_mask = nn::Mask::blocked(padding), .tgt_is_causal = true});
        },
        with_parameters({tgt, memory}, layer));
    INFO("norm_first " << norm_first << "\n" << result.report);
    CHECK(result.ok);
  }
}
