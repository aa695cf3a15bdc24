// Lesson 05's functions: the four scores on the worked example (by hand), the invariants of
// attention with each of them (rows sum to 1, masked keys get exactly 0, padding never leaks),
// a float64 gradcheck of every scoring function with a mask and of the matching model's loss
// (gradcheck's defaults: an element passes when |analytic - numeric| <= atol + rtol *
// |numeric|, eps 1e-6, atol 1e-5, rtol 1e-3), the entropy experiment, the dimension pitfall,
// and the matching task.
#include <cmath>
#include <limits>

#include "lessons/05_scoring/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson05;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Catch::Matchers::WithinAbs;

namespace {

// Batch of 2, 3 queries each; the first sequence has 5 real keys, the second 2 (then padding).
Tensor key_mask() {
  return Tensor(f64({1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, {2, 5}));
}

}  // namespace

TEST_CASE("the worked example: every score by hand", "[lesson05]") {
  WorkedExample e = worked_example();
  Generator gen(0);
  Scorer dot(ScoreKind::kDot, 3, 3, 4, gen), scaled(ScoreKind::kScaledDot, 3, 3, 4, gen);
  Scorer general(ScoreKind::kGeneral, 3, 3, 4, gen), additive(ScoreKind::kAdditive, 3, 3, 4, gen);
  general.to(kFloat64);
  additive.to(kFloat64);
  set_worked_general_weights(general);
  // q0 = (1,0,1), q1 = (0,2,0); k0 = (1,1,0), k1 = (0,1,1), k2 = (2,0,0), k3 = (1,1,1).
  check_close(dot.forward(e.queries, e.keys).data(), f64({1, 1, 2, 2, 2, 2, 0, 2}, {1, 2, 4}));
  check_close(scaled.forward(e.queries, e.keys).data(),
              f64({1, 1, 2, 2, 2, 2, 0, 2}, {1, 2, 4}) / std::sqrt(3.0), 1e-15);
  // W = diag(1, 2, -1): q0^T W k = k_x - k_z, q1^T W k = 4 k_y.
  check_close(general.forward(e.queries, e.keys).data(), f64({1, -1, 2, 0, 4, 4, 0, 4}, {1, 2, 4}));
  // additive: v . tanh(W q + U k + b), written out for q1 and k2.
  NDArray s = additive.forward(e.queries, e.keys).data();
  const NDArray W = additive.additive.query_projection.weight.data();
  const NDArray U = additive.additive.key_projection.weight.data();
  const NDArray b = additive.additive.key_projection.bias.data();
  const NDArray v = additive.additive.to_score.weight.data();
  double expected = 0;
  for (Index a = 0; a < 4; ++a)
    expected += v.at({0, a}) * std::tanh(2 * W.at({a, 1}) + 2 * U.at({a, 0}) + b.at({a}));
  CHECK_THAT(s.at({0, 1, 2}), WithinAbs(expected, 1e-14));
  // Only the chosen score's parameters are registered.
  CHECK(dot.parameter_count() == 0);
  CHECK(scaled.parameter_count() == 0);
  CHECK(general.parameter_count() == 9);
  CHECK(additive.parameter_count() == 3 * 4 + (3 * 4 + 4) + 4);
  for (ScoreKind kind : all_scores()) CHECK(parse_score(score_name(kind)) == kind);
  CHECK_THAT(error_message([] { parse_score("cosine"); }),
             Contains("unknown score 'cosine': use dot, scaled, general or additive"));
}

TEST_CASE("the worked example: the masked softmax gives the padding exactly 0", "[lesson05]") {
  WorkedExample e = worked_example();
  nn::Attended masked = nn::attend(nn::dot_score(e.queries, e.keys), e.values, e.mask);
  NDArray w = masked.weights.data();
  // q0's scores 1, 1, 2 over the three real keys.
  const double z = 2 * std::exp(1.0) + std::exp(2.0);
  check_close(slice(w, 1, 0, 1),
              f64({std::exp(1.0) / z, std::exp(1.0) / z, std::exp(2.0) / z, 0}, {1, 1, 4}), 1e-15);
  CHECK(w.at({0, 0, 3}) == 0.0);
  CHECK(w.at({0, 1, 3}) == 0.0);
  // The padding's value (50, 50) does not reach the context.
  CHECK_THAT(masked.context.data().at({0, 0, 0}),
             WithinAbs((std::exp(1.0) + std::exp(2.0)) / z, 1e-15));
}

TEST_CASE("attention with every score: rows sum to 1, masked keys get exactly 0", "[lesson05]") {
  Generator gen(1);
  Tensor mask = key_mask();
  for (ScoreKind kind : all_scores()) {
    INFO(score_name(kind));
    Scorer scorer(kind, 4, 4, 6, gen);
    scorer.to(kFloat64);
    // Large queries: saturated scores must still give exact zeros and finite weights.
    Tensor q = randn({2, 3, 4}, gen, kFloat64) * 5.0, k = randn({2, 5, 4}, gen, kFloat64);
    Tensor v = randn({2, 5, 2}, gen, kFloat64);
    nn::Attended out = nn::attend(scorer.forward(q, k), v, mask);
    NDArray w = out.weights.data();
    for (Index b = 0; b < 2; ++b)
      for (Index i = 0; i < 3; ++i) {
        double row = 0;
        for (Index j = 0; j < 5; ++j) {
          CHECK(std::isfinite(w.at({b, i, j})));
          row += w.at({b, i, j});
        }
        CHECK_THAT(row, WithinAbs(1.0, 1e-12));
      }
    for (Index i = 0; i < 3; ++i)
      for (Index j = 2; j < 5; ++j) CHECK(w.at({1, i, j}) == 0.0);
    // Changing the padded keys and values changes nothing for sequence 1.
    NDArray k2 = k.data().clone(), v2 = v.data().clone();
    for (Index j = 2; j < 5; ++j) {
      k2.set({1, j, 0}, 100);
      v2.set({1, j, 1}, -100);
    }
    nn::Attended again = nn::attend(scorer.forward(q, Tensor(k2)), Tensor(v2), mask);
    check_close(slice(again.context.data(), 0, 1, 2), slice(out.context.data(), 0, 1, 2), 1e-12);
  }
}

TEST_CASE("gradcheck: every scoring function with a mask", "[lesson05][gradcheck]") {
  Generator gen(2);
  for (ScoreKind kind : all_scores()) {
    INFO(score_name(kind));
    // The parameter-free scores need equal sizes; general and additive get different ones.
    const bool equal = kind == ScoreKind::kDot || kind == ScoreKind::kScaledDot;
    const Index dq = 3, dk = equal ? 3 : 4;
    Scorer scorer(kind, dq, dk, 5, gen);
    scorer.to(kFloat64);
    Tensor q = randn({2, 3, dq}, gen, kFloat64).requires_grad_();
    Tensor k = randn({2, 5, dk}, gen, kFloat64).requires_grad_();
    Tensor v = randn({2, 5, 2}, gen, kFloat64).requires_grad_();
    Tensor mask = key_mask();
    // Context and weights together: L = sum(context * R1) + sum(weights * R2).
    auto f = [&](const std::vector<Tensor>& in) {
      nn::Attended out = nn::attend(scorer.forward(in[0], in[1]), in[2], mask);
      return concat({flatten(out.context), flatten(out.weights)}, 0);
    };
    GradcheckResult r = gradcheck(f, with_parameters({q, k, v}, scorer));
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == q.numel() + k.numel() + v.numel() + scorer.parameter_count());
    // The masked keys get no gradient at all: they did not take part.
    k.zero_grad();
    sum(f({q, k, v})).backward();
    for (Index j = 2; j < 5; ++j)
      for (Index i = 0; i < dk; ++i) CHECK(k.grad().data().at({1, j, i}) == 0.0);
  }
}

TEST_CASE("gradcheck: the matching model's loss, with padding", "[lesson05][gradcheck]") {
  MatchingTask task{.max_keys = 5, .min_keys = 2, .query_size = 3, .key_size = 3};
  Generator gen(3);
  NDArray mixing = make_mixing_matrix(task, gen);
  MatchingBatch batch = draw_matching_batch(task, mixing, 6, gen, kFloat64);
  for (ScoreKind kind : all_scores()) {
    INFO(score_name(kind));
    Scorer scorer(kind, 3, 3, 4, gen);
    scorer.to(kFloat64);
    Tensor q = Tensor(batch.queries.data().clone(), true);
    Tensor k = Tensor(batch.keys.data().clone(), true);
    GradcheckResult r = gradcheck(
        [&](const std::vector<Tensor>& in) {
          MatchingBatch b = batch;
          b.queries = in[0];
          b.keys = in[1];
          return matching_loss(scorer, b);
        },
        with_parameters({q, k}, scorer));
    INFO(r.report);
    CHECK(r.ok);
    CHECK(std::isfinite(matching_loss(scorer, batch).item()));
  }
}

TEST_CASE("entropy: uniform, one-hot, and the two regimes of section 2", "[lesson05]") {
  CHECK_THAT(mean_entropy(NDArray::full({2, 8}, 1.0 / 8, kFloat64)),
             WithinAbs(std::log(8.0), 1e-15));
  CHECK(mean_entropy(f64({0, 1, 0, 0}, {1, 4})) == 0.0);  // 0 log 0 = 0
  CHECK_THAT(mean_entropy(f64({0.5, 0.5, 0, 0}, {1, 4})), WithinAbs(std::log(2.0), 1e-15));
  Generator gen(4);
  EntropyPoint small = entropy_at(4, 64, 300, gen);
  EntropyPoint big = entropy_at(256, 64, 300, gen);
  // q . k has standard deviation sqrt(d); divided by sqrt(d) it is 1.
  CHECK_THAT(small.unscaled_std, WithinAbs(2, 0.2));
  CHECK_THAT(big.unscaled_std, WithinAbs(16, 1));
  CHECK_THAT(big.scaled_std, WithinAbs(1, 0.05));
  // Unscaled, the softmax collapses as d grows; scaled, its entropy stays near log 64 - 1/2.
  CHECK(big.unscaled < 0.5);
  CHECK(big.unscaled_top > 0.85);
  CHECK(small.unscaled > big.unscaled + 2);
  CHECK_THAT(big.scaled, WithinAbs(small.scaled, 0.05));
  CHECK_THAT(big.scaled, WithinAbs(std::log(64.0) - 0.5, 0.1));
  // The softmax's slope 1 - sum p^2 (the trace of its Jacobian) vanishes with it, unscaled.
  CHECK(big.unscaled_slope < 0.2);
  CHECK(small.unscaled_slope > 0.8);
  CHECK_THAT(big.scaled_slope, WithinAbs(small.scaled_slope, 0.02));
  CHECK(big.scaled_slope > 0.9);
  CHECK_THAT(error_message([&] { entropy_at(0, 64, 10, gen); }), Contains("at least 1"));
}

TEST_CASE("the dimension pitfall: dot refuses, general and additive project", "[lesson05]") {
  Generator gen(5);
  PitfallDemo demo = dimension_pitfall(4, 6, 8, gen);
  CHECK_THAT(demo.dot_error, Contains("dot_score: query size 4 and key size 6 differ"));
  CHECK(demo.general_scores == Shape{1, 2, 5});
  CHECK(demo.additive_scores == Shape{1, 2, 5});
  CHECK(demo.general_parameters == 4 * 6);
  CHECK(demo.additive_parameters == 4 * 8 + (6 * 8 + 8) + 8);
  CHECK(dimension_pitfall(3, 3, 2, gen).dot_error == "(no error: the sizes are equal)");
  // The same error through the lesson's Scorer: scaled too.
  Scorer scaled(ScoreKind::kScaledDot, 4, 6, 8, gen);
  CHECK_THAT(error_message([&] {
               scaled.forward(randn({1, 1, 4}, gen), randn({1, 3, 6}, gen));
             }),
             Contains("query size 4 and key size 6 differ"));
}

TEST_CASE("the matching task: batches, masks and targets", "[lesson05]") {
  MatchingTask task{.max_keys = 6, .min_keys = 3, .query_size = 4, .key_size = 5, .noise = 0};
  Generator gen(6);
  NDArray mixing = make_mixing_matrix(task, gen);
  REQUIRE(mixing.shape() == Shape{4, 5});
  MatchingBatch batch = draw_matching_batch(task, mixing, 50, gen, kFloat64);
  CHECK(batch.queries.shape() == Shape{50, 1, 4});
  CHECK(batch.keys.shape() == Shape{50, 6, 5});
  double chance = 0;
  for (Index b = 0; b < 50; ++b) {
    Index real = 0;
    for (Index k = 0; k < 6; ++k) real += batch.mask.data().at({b, k}) == 1;
    CHECK(real >= 3);
    CHECK(real <= 6);
    const Index target = static_cast<Index>(batch.targets.data().at({b}));
    CHECK(target < real);  // the target is a real key
    chance += 1.0 / static_cast<double>(real);
    // Without noise q = P k_target exactly.
    for (Index i = 0; i < 4; ++i) {
      double pk = 0;
      for (Index j = 0; j < 5; ++j) pk += mixing.at({i, j}) * batch.keys.data().at({b, target, j});
      CHECK_THAT(batch.queries.data().at({b, 0, i}), WithinAbs(pk, 1e-12));
    }
  }
  CHECK_THAT(chance_accuracy(batch), WithinAbs(chance / 50, 1e-15));
  task.mixed = false;
  CHECK_THAT(error_message([&] { make_mixing_matrix(task, gen); }),
             Contains("the query size 4 must equal the key size 5"));
}

TEST_CASE("the matching task: what each score can learn", "[lesson05]") {
  MatchingTask task;  // the program's defaults: 16 and 16, 4 to 8 keys, noise 0.1
  Generator gen(0);
  NDArray mixing = make_mixing_matrix(task, gen);
  MatchingBatch test = draw_matching_batch(task, mixing, 500, gen);
  const double chance = chance_accuracy(test);
  MatchingTraining training{.steps = 300, .batch = 64, .lr = 1e-2, .eval_every = 100};
  // Parameter-free scores compare coordinates that P scrambled: near chance, and scaling
  // changes the weights but never the ranking.
  Generator init(1);
  Scorer dot(ScoreKind::kDot, 16, 16, 32, init), scaled(ScoreKind::kScaledDot, 16, 16, 32, init);
  CHECK(matching_accuracy(dot, test) < chance + 0.1);
  CHECK(matching_accuracy(dot, test) == matching_accuracy(scaled, test));
  Generator data_gen(2);
  MatchingCurve flat = train_matching(dot, task, mixing, test, training, data_gen);
  CHECK(flat.losses.empty());
  CHECK(flat.accuracies.front() == flat.accuracies.back());
  // The general score learns to undo P.
  Scorer general(ScoreKind::kGeneral, 16, 16, 32, init);
  MatchingCurve curve = train_matching(general, task, mixing, test, training, data_gen);
  CHECK(curve.steps == std::vector<double>{0, 100, 200, 300});
  CHECK(curve.accuracies.back() > 0.9);
  CHECK(mean_target_weight(general, test) > 0.8);
  // With P = I the query is a noisy copy of its key, and the plain dot product works.
  task.mixed = false;
  NDArray identity = make_mixing_matrix(task, gen);
  MatchingBatch copies = draw_matching_batch(task, identity, 500, gen);
  CHECK(matching_accuracy(dot, copies) > 0.95);
  CHECK(mean_target_weight(dot, copies) > mean_target_weight(scaled, copies));
}

TEST_CASE("the matching task: a non-finite loss stops training, naming the step", "[lesson05]") {
  MatchingTask task;
  Generator gen(0);
  NDArray mixing = make_mixing_matrix(task, gen);
  MatchingBatch test = draw_matching_batch(task, mixing, 50, gen);
  Generator init(1), data_gen(2);
  Scorer general(ScoreKind::kGeneral, 16, 16, 32, init);
  // A NaN weight makes every score NaN, hence the loss of the very first step.
  general.parameters()[0].data().set({0, 0}, std::numeric_limits<double>::quiet_NaN());
  MatchingTraining training{.steps = 10, .batch = 8, .lr = 1e-2, .eval_every = 5};
  CHECK_THROWS_WITH(train_matching(general, task, mixing, test, training, data_gen),
                    StartsWith("train_matching (learning rate 0.01): the loss of step 1 is NaN; "
                               "training stopped there"));
}
