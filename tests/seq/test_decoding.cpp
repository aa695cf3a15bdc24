// seq/teacher_forcing.h and seq/decoding.h: the loss, greedy decoding and beam search (on a
// hand-built model where beam search beats greedy; the length penalty; max_length), and beam
// width 1 equal to greedy decoding on RNNsearch, attention included.
#include <array>
#include <cmath>
#include <map>

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

namespace {

// A model whose next-token probabilities depend only on the previous token: p(next | prev) is
// row prev of a table, so every output's probability can be computed by hand. Ids: 0 <pad>,
// 1 <bos>, 2 <eos>, 3 <unk>, 4 'a', 5 'b'.
class MarkovModel : public Seq2SeqModel {
 public:
  static constexpr Index kVocabulary = 6;
  static constexpr std::int64_t kA = 4, kB = 5;
  // probabilities[prev] = {p(<eos>), p(a), p(b)}; every other token gets e^-40.
  explicit MarkovModel(const std::map<std::int64_t, std::array<double, 3>>& probabilities)
      : table_(NDArray::full({kVocabulary, kVocabulary}, -40.0, kFloat64)) {
    for (const auto& [prev, p] : probabilities) {
      table_.set({prev, Vocabulary::kEos}, log_of(p[0]));
      table_.set({prev, kA}, log_of(p[1]));
      table_.set({prev, kB}, log_of(p[2]));
    }
  }
  Encoded encode(const Tensor& source, const Tensor& mask) override {
    return {Tensor(), Tensor(), mask, zeros({source.size(0), 1}, kFloat64)};
  }
  DecoderStep step(const Encoded&, const Tensor& state, const Tensor& previous) override {
    // features = one-hot(previous), so output_layer gives row `previous` of the table.
    NDArray one_hot = NDArray::zeros({previous.size(0), kVocabulary}, kFloat64);
    for (Index b = 0; b < previous.size(0); ++b)
      one_hot.set({b, previous.data().data<std::int64_t>()[b]}, 1.0);
    return {state, Tensor(one_hot), Tensor()};
  }
  Tensor output_layer(const Tensor& features) override { return matmul(features, Tensor(table_)); }
  bool has_attention() const override { return false; }

 private:
  // A probability of 0 becomes e^-40, not -inf: the one-hot product would give 0 * -inf = NaN.
  static double log_of(double p) { return p > 0 ? std::log(p) : -40.0; }

  NDArray table_;
};

Batch one_source() {
  return make_batch({{4, 5}}, {{4}});
}

}  // namespace

TEST_CASE("the loss is the mean cross-entropy over the real target tokens", "[seq]") {
  Generator gen(5);
  const Tensor logits = randn({2, 3, 4}, gen, kFloat64);
  const Tensor target(ids({1, 3, 0, 2, 0, 0}, {2, 3}));  // 3 real tokens, 3 <pad>
  double total = 0;
  for (auto [b, i] : {std::pair<Index, Index>{0, 0}, {0, 1}, {1, 0}}) {
    double norm = 0;
    for (Index v = 0; v < 4; ++v) norm += std::exp(logits.data().at({b, i, v}));
    total -=
        logits.data().at({b, i, static_cast<Index>(target.data().at({b, i}))}) - std::log(norm);
  }
  CHECK_THAT(sequence_loss(logits, target).item(), WithinAbs(total / 3, 1e-12));
}

TEST_CASE("beam search finds the more probable output that greedy misses", "[seq]") {
  // From <bos>: a 0.6, b 0.4. After a: <eos> 0.4, a 0.35, b 0.25. After b: <eos> 0.9.
  // Greedy takes a, then <eos>: p("a") = 0.6 * 0.4 = 0.24. But p("b") = 0.4 * 0.9 = 0.36.
  MarkovModel model({{Vocabulary::kBos, {0.0, 0.6, 0.4}},
                     {MarkovModel::kA, {0.4, 0.35, 0.25}},
                     {MarkovModel::kB, {0.9, 0.05, 0.05}}});
  const Batch b = one_source();
  const Decoded greedy = greedy_decode(model, b.source, b.source_mask, 5)[0];
  CHECK(greedy.tokens == TokenIds{MarkovModel::kA});
  CHECK_THAT(greedy.log_probability, WithinAbs(std::log(0.24), 1e-9));
  for (Index width : {2, 3, 5}) {
    const Decoded beam = beam_search(model, b.source, b.source_mask,
                                     {.width = width, .max_length = 5, .length_penalty = 0});
    CHECK(beam.tokens == TokenIds{MarkovModel::kB});
    CHECK(beam.finished);
    CHECK_THAT(beam.log_probability, WithinAbs(std::log(0.36), 1e-9));
  }
  CHECK(beam_search(model, b.source, b.source_mask, {.width = 1, .max_length = 5}).tokens ==
        greedy.tokens);
}

TEST_CASE("the length penalty decides between a short and a long output", "[seq]") {
  // p("") = p(<eos> first) = 0.5; p("a") = 0.5 * 0.95 = 0.475. By log p the empty output
  // wins; per token (length 1 against 2) "a" does: log 0.475 / 2 > log 0.5.
  MarkovModel model({{Vocabulary::kBos, {0.5, 0.5, 0.0}}, {MarkovModel::kA, {0.95, 0.025, 0.025}}});
  const Batch b = one_source();
  CHECK(beam_search(model, b.source, b.source_mask,
                    {.width = 2, .max_length = 5, .length_penalty = 0})
            .tokens.empty());
  CHECK(beam_search(model, b.source, b.source_mask,
                    {.width = 2, .max_length = 5, .length_penalty = 1})
            .tokens == TokenIds{MarkovModel::kA});
}

TEST_CASE("decoding stops at max_length and says so", "[seq]") {
  MarkovModel model({{Vocabulary::kBos, {0.1, 0.9, 0.0}}, {MarkovModel::kA, {0.1, 0.9, 0.0}}});
  const Batch b = one_source();
  const Decoded greedy = greedy_decode(model, b.source, b.source_mask, 4)[0];
  CHECK(greedy.tokens.size() == 4);
  CHECK_FALSE(greedy.finished);
  const Decoded beam = beam_search(model, b.source, b.source_mask, {.width = 1, .max_length = 4});
  CHECK(beam.tokens == greedy.tokens);
  CHECK_FALSE(beam.finished);
  CHECK_THAT(error_message([&] {
               beam_search(model, b.source, b.source_mask, {.width = 0, .max_length = 4});
             }),
             Contains("at least 1"));
  const Batch two = make_batch({{4}, {5}}, {{4}, {4}});
  CHECK_THAT(error_message([&] { beam_search(model, two.source, two.source_mask, {}); }),
             Contains("one sentence at a time"));
}

TEST_CASE("beam search of width 1 is greedy decoding, token for token (attention)", "[seq]") {
  const DateTask& task = small_task();
  for (Scoring scoring : {Scoring::kAdditive, Scoring::kGeneral}) {
    for (std::uint64_t seed : {1, 2}) {
      Generator gen(seed);
      AttentionSeq2Seq model(tiny_date_sizes(task), scoring,
                             seed == 1 ? Readout::kMaxout : Readout::kLinear, gen);
      const std::vector<Decoded> greedy = decode_dates(model, task, task.test, 10);
      for (std::size_t i = 0; i < 10; ++i) {
        const Batch one = date_batch(task, task.test, {i});
        const Decoded beam =
            beam_search(model, one.source, one.source_mask, {.width = 1, .max_length = 12});
        CHECK(beam.tokens == greedy[i].tokens);
        REQUIRE(beam.weights.size() == greedy[i].weights.size());
        for (std::size_t k = 0; k < beam.weights.size(); ++k)
          for (std::size_t j = 0; j < beam.weights[k].size(); ++j)
            CHECK_THAT(beam.weights[k][j], WithinAbs(greedy[i].weights[k][j], 1e-6));
      }
    }
  }
}
