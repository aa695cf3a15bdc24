// nn::fused_attention (one op for multi-head attention without weights): equal to the
// composed scaled_dot_product_attention, equal through MultiheadAttention's two paths
// (need_weights true / false), errors, and float64 gradchecks (gradcheck's defaults: eps
// 1e-6, |analytic - numeric| <= 1e-5 + 1e-3 |numeric|).
#include "support.h"

using namespace attend;
using attend::testing::check_close;
using Catch::Matchers::Contains;

namespace {

// [B, T, H*d] -> [B, H, T, d] and back, for the composed reference.
Tensor heads_of(const Tensor& x, Index heads) {
  return permute(reshape(x, {x.size(0), x.size(1), heads, x.size(2) / heads}), {0, 2, 1, 3});
}
Tensor merged(const Tensor& x) {
  return reshape(permute(x, {0, 2, 1, 3}), {x.size(0), x.size(2), x.size(1) * x.size(3)});
}

// The composed path: scaled_dot_product_attention on split heads.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, Index heads, bool causal) {
  nn::SdpaOptions options{.is_causal = causal};
  return merged(nn::scaled_dot_product_attention(heads_of(q, heads), heads_of(k, heads),
                                                 heads_of(v, heads), options)
                    .context);
}

}  // namespace

TEST_CASE("fused_attention equals the composed attention, values and gradients", "[nn]") {
  for (bool causal : {false, true}) {
    Generator data(3);
    const Index tk = causal ? 5 : 7;
    Tensor q = randn({2, 5, 6}, data, kFloat64).requires_grad_();
    Tensor k = randn({2, tk, 6}, data, kFloat64).requires_grad_();
    Tensor v = randn({2, tk, 9}, data, kFloat64).requires_grad_();  // value size 3 per head
    Tensor fused = nn::fused_attention(q, k, v, 3, {.is_causal = causal});
    Tensor reference = composed(q, k, v, 3, causal);
    check_close(fused.data(), reference.data(), 1e-12);
    NDArray g = NDArray::normal(fused.shape(), data, 0, 1, kFloat64);
    fused.backward(g);
    const NDArray dq = q.grad().data(), dk = k.grad().data(), dv = v.grad().data();
    for (Tensor* x : {&q, &k, &v}) x->zero_grad();
    reference.backward(g);
    check_close(dq, q.grad().data(), 1e-12);
    check_close(dk, k.grad().data(), 1e-12);
    check_close(dv, v.grad().data(), 1e-12);
  }
}

TEST_CASE("MultiheadAttention: the fused path (need_weights false) equals the composed one",
          "[nn]") {
  for (bool batch_first : {false, true}) {
    Generator gen(5), data(6);
    nn::MultiheadAttention mha(8, 2, {.batch_first = batch_first}, gen);
    Tensor x = randn({4, 3, 8}, data).requires_grad_();  // float32, as in training
    Tensor memory = randn({6, 3, 8}, data).requires_grad_();
    if (batch_first) memory = randn({4, 6, 8}, data).requires_grad_();
    for (bool self : {true, false}) {
      const Tensor& kv = self ? x : memory;
      nn::MhaForward with{.is_causal = self}, without{.need_weights = false, .is_causal = self};
      Tensor a = mha(x, kv, kv, with).output, b = mha(x, kv, kv, without).output;
      CHECK(graph_ops(b).size() < graph_ops(a).size());
      CHECK(std::ranges::count(graph_ops(b), std::string("fused_attention")) == 1);
      check_close(b.data(), a.data(), 1e-5);
      NDArray g = NDArray::normal(a.shape(), data);
      a.backward(g);
      const NDArray dx = x.grad().data(), dw = mha.in_proj_weight.grad().data();
      x.zero_grad();
      mha.zero_grad();
      b.backward(g);
      check_close(x.grad().data(), dx, 1e-5);
      check_close(mha.in_proj_weight.grad().data(), dw, 1e-5);
      x.zero_grad();
      mha.zero_grad();
    }
  }
}

TEST_CASE("fused_attention: bad shapes name the op", "[nn]") {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4});
  CHECK_THROWS_WITH(nn::fused_attention(q, k, zeros({2, 4, 4}), 2),
                    Contains("fused_attention") && Contains("[2,4,4]"));
  CHECK_THROWS_WITH(nn::fused_attention(q, k, k, 3), Contains("multiple of 3"));
  CHECK_THROWS_WITH(nn::fused_attention(q, k, k, 2, {.is_causal = true}), Contains("is_causal"));
  CHECK_THROWS_WITH(nn::fused_self_attention(zeros({2, 3, 8}), 2), Contains("multiple of 6"));
}

TEST_CASE("gradcheck: fused_attention", "[autograd][gradcheck]") {
  Generator data(9);
  SECTION("cross-attention, separate q, k, v") {
    Tensor q = randn({2, 3, 4}, data, kFloat64).requires_grad_();
    Tensor k = randn({2, 5, 4}, data, kFloat64).requires_grad_();
    Tensor v = randn({2, 5, 6}, data, kFloat64).requires_grad_();
    auto result = gradcheck(
        [](const std::vector<Tensor>& in) { return nn::fused_attention(in[0], in[1], in[2], 2); },
        {q, k, v});
    INFO(result.report);
    CHECK(result.ok);
    CHECK(result.ops == std::vector<std::string>{"fused_attention"});
  }
  SECTION("causal self-attention from a packed projection, scale given") {
    Tensor qkv = randn({2, 4, 12}, data, kFloat64).requires_grad_();
    auto result = gradcheck(
        [](const std::vector<Tensor>& in) {
          return nn::fused_self_attention(in[0], 2, {.is_causal = true, .scale = 0.7});
        },
        {qkv});
    INFO(result.report);
    CHECK(result.ok);
    CHECK(result.ops == std::vector<std::string>{"fused_attention"});
  }
}
