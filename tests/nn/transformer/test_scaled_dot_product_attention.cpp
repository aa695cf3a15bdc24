// Scaled dot-product attention and masks: values by hand, masked keys, float64 gradchecks
// (gradcheck's defaults: eps 1e-6, |analytic - numeric| <= 1e-5 + 1e-3 |numeric|).
#include <cmath>

#include "support.h"

using namespace attend;
using attend::testing::check_close;
using attend::testing::f64;
using Catch::Matchers::Contains;

TEST_CASE("scaled_dot_product_attention: values by hand", "[nn][transformer]") {
  // One query [1, 0] against keys [1, 0] and [0, 1]: scores [1, 0] / sqrt(2).
  Tensor q(f64({1, 0}, {1, 1, 2})), k(f64({1, 0, 0, 1}, {1, 2, 2})),
      v(f64({1, 2, 3, 4}, {1, 2, 2}));
  nn::Attended a = nn::scaled_dot_product_attention(q, k, v);
  const double w0 = 1 / (1 + std::exp(-1 / std::sqrt(2.0))), w1 = 1 - w0;  // 0.6698, 0.3302
  check_close(a.weights.data(), f64({w0, w1}, {1, 1, 2}));
  check_close(a.context.data(), f64({w0 * 1 + w1 * 3, w0 * 2 + w1 * 4}, {1, 1, 2}));
}

TEST_CASE("causal_mask blocks the future only", "[nn][transformer]") {
  nn::Mask mask = nn::causal_mask(3);
  check_close(mask.keep_values().data().to(kFloat64), f64({1, 0, 0, 1, 1, 0, 1, 1, 1}, {3, 3}));
  CHECK_THROWS_WITH(nn::causal_mask(0), Contains("causal_mask"));
}

TEST_CASE("masks: blocked, keep and additive read the same mask", "[nn][transformer]") {
  Generator gen(0);
  Tensor q = randn({2, 3, 4}, gen, kFloat64), k = randn({2, 5, 4}, gen, kFloat64);
  Tensor v = randn({2, 5, 3}, gen, kFloat64);
  Tensor pad(f64({0, 0, 0, 1, 1, 0, 0, 0, 0, 1}, {2, 1, 5}));  // 1 = padding
  Tensor additive(f64({0, 0, 0, -INFINITY, -INFINITY, 0, 0, 0, 0, -INFINITY}, {2, 1, 5}));
  auto with = [&](const nn::Mask& m) {
    return nn::scaled_dot_product_attention(q, k, v, {.attn_mask = m});
  };
  nn::Attended blocked = with(nn::Mask::blocked(pad));
  check_close(with(nn::Mask::keep(1.0 - pad)).weights.data(), blocked.weights.data());
  check_close(with(nn::Mask::additive(additive)).weights.data(), blocked.weights.data());
  // Exactly zero weight on padding, rows still sum to one.
  CHECK(blocked.weights.data().at({0, 2, 3}) == 0.0);
  CHECK(blocked.weights.data().at({1, 0, 4}) == 0.0);
  check_close(sum(blocked.weights, -1).data(), NDArray::ones({2, 3}, kFloat64), 1e-12);
  // An additive bias shifts the scores before the softmax.
  Tensor bias(f64({0, 0, 0, 0, std::log(2.0)}, {1, 1, 5}));
  nn::Attended plain = with({}), shifted = with(nn::Mask::additive(bias));
  const double ratio_plain =
      plain.weights.data().at({0, 0, 4}) / plain.weights.data().at({0, 0, 0});
  const double ratio = shifted.weights.data().at({0, 0, 4}) / shifted.weights.data().at({0, 0, 0});
  CHECK(ratio == Approx(2 * ratio_plain).epsilon(1e-12));
}

TEST_CASE("a fully masked query gets zero weights and output, never NaN", "[nn][transformer]") {
  Generator gen(1);
  Tensor q = randn({1, 2, 4}, gen, kFloat64), k = randn({1, 3, 4}, gen, kFloat64);
  Tensor v = randn({1, 3, 2}, gen, kFloat64);
  Tensor blocked(f64({1, 1, 1, 0, 1, 0}, {2, 3}));  // query 0 may see no key
  nn::Attended a =
      nn::scaled_dot_product_attention(q, k, v, {.attn_mask = nn::Mask::blocked(blocked)});
  for (double w : a.weights.data().to_vector()) CHECK(std::isfinite(w));
  check_close(slice(a.context, 1, 0, 1).data(), NDArray::zeros({1, 1, 2}, kFloat64));
  CHECK(a.weights.data().at({0, 1, 0}) == Approx(1 - a.weights.data().at({0, 1, 2})));
}

TEST_CASE("masked keys send back exactly zero gradient", "[nn][transformer]") {
  Generator gen(2);
  Tensor q = randn({1, 2, 3}, gen, kFloat64).requires_grad_();
  Tensor k = randn({1, 4, 3}, gen, kFloat64).requires_grad_();
  Tensor v = randn({1, 4, 2}, gen, kFloat64).requires_grad_();
  Tensor pad(f64({0, 0, 1, 1}, {1, 1, 4}));
  nn::Attended a = nn::scaled_dot_product_attention(q, k, v, {.attn_mask = nn::Mask::blocked(pad)});
  sum(a.context * a.context).backward();
  for (Index key : {2, 3})
    for (Index d = 0; d < 3; ++d) {
      CHECK(k.grad().data().at({0, key, d}) == 0.0);
      if (d < 2) CHECK(v.grad().data().at({0, key, d}) == 0.0);
    }
  CHECK(k.grad().data().at({0, 0, 0}) != 0.0);
}

TEST_CASE("scaled_dot_product_attention: is_causal equals the causal mask", "[nn][transformer]") {
  Generator gen(3);
  Tensor q = randn({2, 4, 3}, gen, kFloat64), k = randn({2, 4, 3}, gen, kFloat64);
  Tensor v = randn({2, 4, 3}, gen, kFloat64);
  nn::Attended a = nn::scaled_dot_product_attention(q, k, v, {.is_causal = true});
  nn::Attended b = nn::scaled_dot_product_attention(q, k, v, {.attn_mask = nn::causal_mask(4)});
  check_close(a.context.data(), b.context.data(), 0);
  CHECK(a.weights.data().at({1, 0, 1}) == 0.0);
}

TEST_CASE("scaled_dot_product_attention: bad shapes name the op and the shapes",
          "[nn][transformer]") {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  CHECK_THROWS_WITH(nn::scaled_dot_product_attention(q, zeros({2, 5, 3}), v),
                    Contains("scaled_dot_product_attention") && Contains("[2,5,3]"));
  CHECK_THROWS_WITH(nn::scaled_dot_product_attention(q, k, zeros({2, 4, 6})), Contains("[2,4,6]"));
  CHECK_THROWS_WITH(
      nn::scaled_dot_product_attention(q, k, v, {.attn_mask = nn::Mask::blocked(zeros({3, 4}))}),
      Contains("attn_mask") && Contains("[3,4]") && Contains("[2,3,5]"));
  CHECK_THROWS_WITH(nn::Mask::additive(tensor({0, NAN})), Contains("Mask::additive"));
}

TEST_CASE("gradcheck: scaled_dot_product_attention with masks and scale", "[nn][gradcheck]") {
  Generator gen(4);
  Tensor q = randn({2, 2, 3, 4}, gen, kFloat64).requires_grad_();
  Tensor k = randn({2, 2, 5, 4}, gen, kFloat64).requires_grad_();
  Tensor v = randn({2, 2, 5, 3}, gen, kFloat64).requires_grad_();
  Tensor pad(f64({0, 0, 0, 0, 1, 0, 0, 1, 1, 1}, {2, 1, 1, 5}));
  Tensor bias = randn({3, 5}, gen, kFloat64);
  nn::Mask mask = nn::Mask::blocked(pad).combined_with(nn::Mask::additive(bias));
  for (double scale : {0.0, 0.3}) {
    auto result = gradcheck(
        [&](const std::vector<Tensor>& in) {
          nn::Attended a = nn::scaled_dot_product_attention(in[0], in[1], in[2],
                                                            {.attn_mask = mask, .scale = scale});
          return a.context + 0.5 * sum(a.weights * a.weights, -1, true);
        },
        {q, k, v});
    INFO(result.report);
    CHECK(result.ok);
  }
}
