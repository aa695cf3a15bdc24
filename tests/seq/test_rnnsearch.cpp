// seq/rnnsearch.h: RNNsearch (float64 gradchecks of the whole model at tiny sizes, both scoring
// functions and both readouts, gradcheck's default tolerances: eps 1e-6, atol 1e-5, rtol
// 1e-3), the maxout deep output by hand, its attention weights (rows sum to 1, padding gets
// exactly 0, scored from the previous state, s_0 from h_bwd_1) and padding invariance.
#include <algorithm>

#include "attend.h"
#include "seq/test_models.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::seq;
using attend::data::DateExample;
using attend::data::Vocabulary;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("gradcheck of the whole attention model, with padding", "[seq][gradcheck]") {
  // Every scoring with every readout, each from its own initial weights (seeds 1-4).
  std::uint64_t seed = 0;
  for (Scoring scoring : {Scoring::kAdditive, Scoring::kGeneral}) {
    for (Readout readout : {Readout::kMaxout, Readout::kLinear}) {
      ++seed;
      INFO(scoring_name(scoring) << " scoring, " << readout_name(readout) << " readout, seed "
                                 << seed);
      AttentionSeq2Seq model = tiny_model(seed, scoring, readout);
      model.to(kFloat64);
      GradcheckResult r = gradcheck_model(model, tiny_batch(8));
      INFO(r.report);
      CHECK(r.ok);
      CHECK(r.elements_checked == model.parameter_count());
      CHECK(std::count(r.ops.begin(), r.ops.end(), "softmax") == 1);
      CHECK(std::count(r.ops.begin(), r.ops.end(), "max") == (readout == Readout::kMaxout));
    }
  }
}

TEST_CASE("the maxout deep output by hand", "[seq]") {
  AttentionSeq2Seq model = tiny_model(9);
  model.to(kFloat64);
  REQUIRE(model.deep_output);
  Generator gen(10);
  const Tensor features = randn({2, 4 + 8 + 3}, gen, kFloat64);   // [s_(i-1); c_i; E y_(i-1)]
  const NDArray t_tilde = (*model.deep_output)(features).data();  // [2, 6]
  NDArray t = NDArray::zeros({2, 3}, kFloat64);
  for (Index b = 0; b < 2; ++b)
    for (Index j = 0; j < 3; ++j)
      t.set({b, j}, std::max(t_tilde.at({b, 2 * j}), t_tilde.at({b, 2 * j + 1})));
  check_close(model.output_layer(features).data(), model.readout(Tensor(t)).data(), 1e-14);
  // The deep output reads s_(i-1); the linear readout reads s_i.
  const Batch batch = tiny_batch(8);
  const Encoded e = model.encode(batch.source, batch.source_mask);
  const DecoderStep step = model.step(e, e.initial_state, Tensor(ids({4, 5}, {2})));
  check_close(slice(step.features, 1, 0, 4).data(), e.initial_state.data(), 0.0);
  AttentionSeq2Seq linear = tiny_model(9, Scoring::kAdditive, Readout::kLinear);
  linear.to(kFloat64);
  const Encoded e2 = linear.encode(batch.source, batch.source_mask);
  const DecoderStep step2 = linear.step(e2, e2.initial_state, Tensor(ids({4, 5}, {2})));
  check_close(slice(step2.features, 1, 0, 4).data(), step2.state.data(), 0.0);
  CHECK_FALSE(linear.deep_output);
  CHECK_THAT(error_message([] { parse_readout("softmax"); }), Contains("maxout or linear"));
  CHECK_THAT(error_message([] { parse_scoring("dot"); }), Contains("additive or general"));
}

TEST_CASE("attention rows sum to 1 and padded positions get exactly 0", "[seq]") {
  for (DType dtype : {kFloat64, kFloat32}) {
    AttentionSeq2Seq model = tiny_model(3);
    model.to(dtype);
    const Batch batch = tiny_batch(8);
    const Tensor weights = teacher_forced(model, batch).weights;
    REQUIRE(weights.shape() == Shape{2, 5, 5});  // [B, T, S]
    const interpret::AttentionInvariants inv =
        interpret::check_attention(weights, batch.source_mask);
    CHECK(inv.rows == 10);
    CHECK(inv.masked_positions == 10);  // sentence 2 has 2 padded positions, at all 5 steps
    CHECK(inv.largest_masked_weight == 0.0);
    CHECK(inv.largest_row_sum_error < (dtype == kFloat64 ? 1e-14 : 1e-6));
  }
  // The same in what greedy decoding records, which the heatmaps draw.
  AttentionSeq2Seq model = tiny_model(4);
  const Batch batch = tiny_batch(8);
  for (const Decoded& d : greedy_decode(model, batch.source, batch.source_mask, 6)) {
    REQUIRE_FALSE(d.weights.empty());
    for (const std::vector<double>& alpha : d.weights) {
      double sum = 0;
      for (double a : alpha) sum += a;
      CHECK_THAT(sum, WithinAbs(1.0, 1e-6));
    }
  }
  const std::vector<Decoded> decoded = greedy_decode(model, batch.source, batch.source_mask, 6);
  for (const std::vector<double>& alpha : decoded[1].weights)
    CHECK((alpha[3] == 0.0 && alpha[4] == 0.0));
}

TEST_CASE("a padded sentence gives what it gives alone, attention included", "[seq]") {
  AttentionSeq2Seq model = tiny_model(5, Scoring::kAdditive, Readout::kMaxout, 9);
  model.to(kFloat64);
  const Batch both = make_batch({{4, 5, 6, 7, 8}, {8, 4, 6}}, {{4, 5, 6}, {6, 5}});
  const Batch alone = make_batch({{8, 4, 6}}, {{6, 5}});
  const TeacherForced batched = teacher_forced(model, both);
  const TeacherForced single = teacher_forced(model, alone);
  for (Index i = 0; i < 3; ++i) {
    for (Index v = 0; v < 9; ++v)
      CHECK_THAT(batched.logits.data().at({1, i, v}),
                 WithinAbs(single.logits.data().at({0, i, v}), 1e-12));
    for (Index j = 0; j < 3; ++j)
      CHECK_THAT(batched.weights.data().at({1, i, j}),
                 WithinAbs(single.weights.data().at({0, i, j}), 1e-12));
  }
}

TEST_CASE("s_0 comes from h_bwd_1, and attention from the previous state", "[seq]") {
  AttentionSeq2Seq model = tiny_model(6);
  model.to(kFloat64);
  const Batch batch = tiny_batch(8);
  const Encoded e = model.encode(batch.source, batch.source_mask);
  // h_bwd_1 is the backward half of the first annotation, for the padded sentence too.
  const Tensor h_bwd_1 = squeeze(slice(slice(e.memory, 1, 0, 1), 2, 4, 8), 1);  // [B, n]
  check_close(e.initial_state.data(), tanh(model.init_state(h_bwd_1)).data(), 1e-15);
  // The weights of step i depend on s_{i-1} and the source only, not on y_{i-1}.
  const Tensor first(ids({4, 4}, {2})), other(ids({5, 7}, {2}));
  const DecoderStep a = model.step(e, e.initial_state, first);
  const DecoderStep b = model.step(e, e.initial_state, other);
  check_close(a.weights.data(), b.weights.data(), 0.0);
  CHECK(a.state.data().at({0, 0}) != b.state.data().at({0, 0}));  // but s_i does
  CHECK(e.keys.shape() == Shape{2, 5, 5});                        // U h_j, computed once
}
