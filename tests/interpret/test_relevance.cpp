// interpret/relevance.h: gradient-weighted attention relevance (Chefer et al. 2021b) on a
// 3-token, 2-block case worked by hand, then on gradients from a real backward() through two
// nn::MultiheadAttention blocks, and the errors.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;

namespace {

// The two layers of test_rollout.cpp: A_1, A_2 [2 heads, 3, 3].
NDArray attention1() {
  return f64({1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5, 0.5, 0.5, 0, 0, 1, 0, 0, 0.5, 0.5}, {2, 3, 3});
}
NDArray attention2() {
  return f64({0, 1, 0, 0, 0, 1, 1, 0, 0, 0.5, 0, 0.5, 0, 0.5, 0.5, 0.5, 0.5, 0}, {2, 3, 3});
}
NDArray gradient1() {
  return f64({2, -1, 0, 1, -2, 4, 4, 0, -4, -2, 2, 1, 0, 1, 0, 8, 2, -2}, {2, 3, 3});
}
NDArray gradient2() {
  return f64({1, 3, 1, 0, -1, 2, -1, 0, 0, 2, 0, -2, 4, 2, 2, 2, -2, 0}, {2, 3, 3});
}

// Eqs. (5)-(6) written out with loops, straight from the paper, for the backward() test.
NDArray relevance_by_formula(const std::vector<NDArray>& a, const std::vector<NDArray>& g) {
  const Index heads = a[0].size(0), t = a[0].size(1);
  std::vector<double> r(static_cast<std::size_t>(t * t), 0.0);
  for (Index i = 0; i < t; ++i) r[i * t + i] = 1;
  for (std::size_t b = 0; b < a.size(); ++b) {
    std::vector<double> bar(r.size(), 0.0), next = r;
    for (Index h = 0; h < heads; ++h)
      for (Index i = 0; i < t; ++i)
        for (Index j = 0; j < t; ++j)
          bar[i * t + j] += std::max(g[b].at({h, i, j}) * a[b].at({h, i, j}), 0.0) / heads;
    for (Index i = 0; i < t; ++i)
      for (Index j = 0; j < t; ++j)
        for (Index k = 0; k < t; ++k) next[i * t + j] += bar[i * t + k] * r[k * t + j];
    r = next;
  }
  return NDArray::from_vector(std::span<const double>(r), {t, t});
}

}  // namespace

TEST_CASE("gradient-weighted attention by hand: E_h[(grad A * A)^+], clamp before the mean",
          "[interpret]") {
  // grad A_1 * A_1, head 0 = [2 0 0; 1/2 -1 0; 1 0 -2], head 1 = [-1 1 0; 0 1 0; 0 1 -1].
  // Clamped at 0, then averaged:  Ā_1 = [1 1/2 0; 1/4 1/2 0; 1/2 1/2 0].
  // (Averaging first and clamping after would give Ā_1[1, 1] = max((-1 + 1) / 2, 0) = 0.)
  check_close(gradient_weighted_attention(attention1(), gradient1()),
              f64({1, 0.5, 0, 0.25, 0.5, 0, 0.5, 0.5, 0}, {3, 3}));
  // grad A_2 * A_2, head 0 = [0 3 0; 0 0 2; -1 0 0], head 1 = [1 0 -1; 0 1 1; 1 -1 0]:
  //   Ā_2 = [1/2 3/2 0; 0 1/2 3/2; 1/2 0 0].
  check_close(gradient_weighted_attention(attention2(), gradient2()),
              f64({0.5, 1.5, 0, 0, 0.5, 1.5, 0.5, 0, 0}, {3, 3}));
}

TEST_CASE("attention relevance by hand: R = I, then R += Ā R per block in forward order",
          "[interpret]") {
  // Block 1: R = I + Ā_1 I = [2 1/2 0; 1/4 3/2 0; 1/2 1/2 1].
  check_close(attention_relevance({attention1()}, {gradient1()}),
              f64({2, 0.5, 0, 0.25, 1.5, 0, 0.5, 0.5, 1}, {3, 3}));
  // Block 2: Ā_2 R = [1/2 * 2 + 3/2 * 1/4, 1/2 * 1/2 + 3/2 * 3/2, 0; ...]
  //               = [11/8 5/2 0; 7/8 3/2 3/2; 1 1/4 0],
  //   R + Ā_2 R = [27/8 3 0; 9/8 3 3/2; 3/2 3/4 1]. No renormalisation (pure self-attention).
  check_close(attention_relevance({attention1(), attention2()}, {gradient1(), gradient2()}),
              f64({27.0 / 8, 3, 0, 9.0 / 8, 3, 1.5, 1.5, 0.75, 1}, {3, 3}));
  // Forward order matters: the blocks swapped, R = I + Ā_2 = [3/2 3/2 0; 0 3/2 3/2; 1/2 0 1],
  // then row 0 of Ā_1 R = 1 * (3/2, 3/2, 0) + 1/2 * (0, 3/2, 3/2) = (3/2, 9/4, 3/4), so
  // R[0, :] = (3, 15/4, 3/4) instead of (27/8, 3, 0).
  NDArray swapped = attention_relevance({attention2(), attention1()}, {gradient2(), gradient1()});
  check_close(slice(swapped, 0, 0, 1), f64({3, 15.0 / 4, 0.75}, {1, 3}));
}

TEST_CASE("attention relevance from a real backward() through two MultiheadAttention blocks",
          "[interpret]") {
  // x -> block 1 (+ residual) -> block 2; the target score y = the sum of token 0's output,
  // as a class token's logit would be. The weights of each block are in the graph: their
  // gradients come from retain_grad() and backward().
  Generator gen(3);
  nn::MultiheadAttention block1(4, 2, {.batch_first = true}, gen);
  nn::MultiheadAttention block2(4, 2, {.batch_first = true}, gen);
  block1.to(kFloat64);
  block2.to(kFloat64);
  Tensor x = randn({1, 3, 4}, gen, kFloat64);
  const nn::MhaForward per_head{.need_weights = true, .average_attn_weights = false};
  nn::MhaOutput out1 = block1(x, x, x, per_head);
  Tensor h = x + out1.output;
  nn::MhaOutput out2 = block2(h, h, h, per_head);
  out1.weights.retain_grad();
  out2.weights.retain_grad();
  sum(slice(out2.output, 1, 0, 1)).backward();

  REQUIRE(out1.weights.shape() == Shape{1, 2, 3, 3});
  std::vector<NDArray> a = {out1.weights.data().reshape({2, 3, 3}),
                            out2.weights.data().reshape({2, 3, 3})};
  std::vector<NDArray> g = {out1.weights.grad().data().reshape({2, 3, 3}),
                            out2.weights.grad().data().reshape({2, 3, 3})};
  for (const NDArray& grad : g) CHECK(squared_norm(grad) > 1e-6);  // both blocks get a gradient
  NDArray relevance = attention_relevance(a, g);
  check_close(relevance, relevance_by_formula(a, g));
  // Only token 0 is scored, so block 2's gradient is zero outside row 0 and so is its Ā.
  check_close(slice(gradient_weighted_attention(a[1], g[1]), 0, 1, 3),
              NDArray::zeros({2, 3}, kFloat64));
}

TEST_CASE("attention relevance: errors name the function and the shapes", "[interpret]") {
  CHECK_THAT(error_message([] {
               gradient_weighted_attention(NDArray::zeros({2, 3, 3}), NDArray::zeros({2, 4, 4}));
             }),
             Contains("gradient_weighted_attention: attention [2,3,3] and gradient [2,4,4]"));
  CHECK_THAT(error_message([] {
               gradient_weighted_attention(NDArray::zeros({4, 4}), NDArray::zeros({4, 4}));
             }),
             Contains("[4,4] and gradient [4,4] must both be [H, Tq, Tk]"));
  CHECK_THAT(error_message([] {
               gradient_weighted_attention(NDArray::zeros({0, 2, 2}), NDArray::zeros({0, 2, 2}));
             }),
             Contains("gradient_weighted_attention: attention [0,2,2]"));
  CHECK_THAT(error_message([] { attention_relevance({attention1()}, {}); }),
             Contains("attention_relevance: 1 blocks of attention but 0 gradients"));
  CHECK_THAT(
      error_message([] {
        attention_relevance({attention1(), NDArray::zeros({2, 4, 4})},
                            {gradient1(), NDArray::zeros({2, 4, 4})});
      }),
      Contains("attention_relevance: block 2 has attention [2,4,4] but block 1 has [2,3,3]"));
}
