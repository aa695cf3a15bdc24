// Attention scoring and masked softmax: invariants (rows sum to 1, masked keys get exactly 0)
// and a float64 gradcheck of every scoring function with a mask (gradcheck's defaults:
// eps 1e-6, atol 1e-5, rtol 1e-3).
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// Batch of 2: the first sequence has 4 real keys, the second 2 (then padding).
Tensor key_mask() {
  return Tensor(f64({1, 1, 1, 1, 1, 1, 0, 0}, {2, 4}));
}

}  // namespace

TEST_CASE("masked softmax: rows sum to 1 and masked keys get exactly 0", "[nn]") {
  Generator gen(1);
  Tensor scores = randn({2, 3, 4}, gen, kFloat64) * 4.0;
  NDArray w = nn::masked_softmax(scores, key_mask()).data();
  for (Index b = 0; b < 2; ++b)
    for (Index q = 0; q < 3; ++q) {
      double row = 0;
      for (Index k = 0; k < 4; ++k) row += w.at({b, q, k});
      CHECK_THAT(row, Catch::Matchers::WithinAbs(1.0, 1e-12));
    }
  for (Index q = 0; q < 3; ++q) {
    CHECK(w.at({1, q, 2}) == 0.0);
    CHECK(w.at({1, q, 3}) == 0.0);
  }
  // A row with every key masked gets all zeros, not NaN.
  Tensor none(f64({0, 0, 0, 0, 1, 1, 1, 1}, {2, 4}));
  NDArray z = nn::masked_softmax(scores, none).data();
  for (Index q = 0; q < 3; ++q)
    for (Index k = 0; k < 4; ++k) CHECK(z.at({0, q, k}) == 0.0);
  // No mask: a plain softmax.
  check_close(nn::masked_softmax(scores, Tensor()).data(), softmax(scores.data(), -1), 0);
}

TEST_CASE("dot and scaled dot scores, and the dimension pitfall", "[nn]") {
  Tensor q(f64({1, 2, 0, 1}, {1, 2, 2})), k(f64({3, 4, 1, 0, 2, 2}, {1, 3, 2}));
  // q0 = (1,2): 3+8, 1, 2+4
  check_close(nn::dot_score(q, k).data(), f64({11, 1, 6, 4, 0, 2}, {1, 2, 3}));
  check_close(nn::scaled_dot_score(q, k).data(),
              f64({11, 1, 6, 4, 0, 2}, {1, 2, 3}) / std::sqrt(2.0), 1e-12);
  Tensor wide = zeros({1, 3, 5}, kFloat64);
  CHECK_THAT(error_message([&] { nn::dot_score(q, wide); }),
             Contains("dot_score: query size 2 and key size 5 differ"));
  CHECK_THAT(error_message([&] {
               nn::dot_score(zeros({2, 2}, kFloat64), k);
             }),
             Contains("dot_score: queries must be [B, T, D], got [2,2]"));
}

TEST_CASE("general and additive scores accept different query and key sizes", "[nn]") {
  Generator gen(2);
  nn::GeneralScore general(3, 5, gen);
  nn::AdditiveScore additive(3, 5, 7, gen);
  Tensor q = randn({2, 4, 3}, gen), k = randn({2, 6, 5}, gen);
  CHECK(general.forward(q, k).shape() == Shape{2, 4, 6});
  CHECK(additive.forward(q, k).shape() == Shape{2, 4, 6});
  // The additive score of one pair is v . tanh(W q + U k + b).
  NDArray s = additive.forward(q, k).data();
  NDArray wq = matmul(q.data(), additive.query_projection.weight.data(), false, true);
  NDArray uk = matmul(k.data(), additive.key_projection.weight.data(), false, true) +
               additive.key_projection.bias.data();
  NDArray v = additive.to_score.weight.data();
  double expected = 0;
  for (Index a = 0; a < 7; ++a)
    expected += v.at({0, a}) * std::tanh(wq.at({1, 2, a}) + uk.at({1, 4, a}));
  CHECK_THAT(s.at({1, 2, 4}), Catch::Matchers::WithinAbs(expected, 1e-5));
  CHECK(additive.parameter_count() == 3 * 7 + 5 * 7 + 7 + 7);
}

TEST_CASE("attend returns weights @ values", "[nn]") {
  Generator gen(3);
  Tensor scores = randn({2, 3, 4}, gen, kFloat64), values = randn({2, 4, 5}, gen, kFloat64);
  nn::Attended a = nn::attend(scores, values, key_mask());
  CHECK(a.context.shape() == Shape{2, 3, 5});
  check_close(a.context.data(), matmul(a.weights.data(), values.data()), 1e-12);
  CHECK_THAT(error_message([&] {
               nn::attend(scores, randn({2, 5, 5}, gen, kFloat64));
             }),
             Contains("attend: scores [2,3,4] do not match values [2,5,5]"));
}

TEST_CASE("attention weights and their gradients can be recorded", "[nn]") {
  Generator gen(4);
  Tensor q = randn({1, 2, 3}, gen).requires_grad_(), k = randn({1, 4, 3}, gen);
  nn::Attended a = nn::attend(nn::scaled_dot_score(q, k), k);
  a.weights.retain_grad();
  sum(a.context).backward();
  REQUIRE(a.weights.grad().defined());
  CHECK(a.weights.grad().shape() == Shape{1, 2, 4});
}

TEST_CASE("gradcheck of every scoring function with a mask", "[nn][gradcheck]") {
  Generator gen(5);
  Tensor q = randn({2, 3, 4}, gen, kFloat64).requires_grad_();
  Tensor k = randn({2, 4, 4}, gen, kFloat64).requires_grad_();
  Tensor v = randn({2, 4, 2}, gen, kFloat64).requires_grad_();
  Tensor mask = key_mask();
  SECTION("dot") {
    auto r = gradcheck(
        [&](const std::vector<Tensor>& in) {
          return nn::attend(nn::dot_score(in[0], in[1]), in[2], mask).context;
        },
        {q, k, v});
    INFO(r.report);
    CHECK(r.ok);
  }
  SECTION("scaled dot") {
    auto r = gradcheck(
        [&](const std::vector<Tensor>& in) {
          return nn::attend(nn::scaled_dot_score(in[0], in[1]), in[2], mask).context;
        },
        {q, k, v});
    INFO(r.report);
    CHECK(r.ok);
  }
  SECTION("general") {
    nn::GeneralScore general(4, 3, gen);
    general.to(kFloat64);
    Tensor k3 = randn({2, 4, 3}, gen, kFloat64).requires_grad_();
    auto r = gradcheck(
        [&](const std::vector<Tensor>& in) {
          return nn::attend(general.forward(in[0], in[1]), in[2], mask).weights;
        },
        with_parameters({q, k3, v}, general));
    INFO(r.report);
    CHECK(r.ok);
  }
  SECTION("additive") {
    nn::AdditiveScore additive(4, 3, 5, gen);
    additive.to(kFloat64);
    Tensor k3 = randn({2, 4, 3}, gen, kFloat64).requires_grad_();
    auto r = gradcheck(
        [&](const std::vector<Tensor>& in) {
          return nn::attend(additive.forward(in[0], in[1]), in[2], mask).context;
        },
        with_parameters({q, k3, v}, additive));
    INFO(r.report);
    CHECK(r.ok);
  }
}
