// Lesson 12's functions: the whole GPT against finite differences (float64, gradcheck's
// defaults: eps 1e-6, |analytic - numeric| <= 1e-5 + 1e-3 |numeric|), causality (no output
// may depend on a later character, bit for bit), the key/value cache against recomputation,
// the count models by hand, sampling, the head shares on hand-made maps.
#include <cmath>
#include <cstring>

#include "lessons/12_gpt/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::lesson12;
using attend::testing::check_close;
using attend::testing::error_message;
using Catch::Matchers::Contains;

namespace {

GptConfig tiny() {
  return {.vocabulary = 5, .context = 6, .d_model = 4, .layers = 2, .heads = 2, .feedforward = 8};
}

Tensor ids(std::vector<std::int64_t> values, Index rows = 1) {
  const auto n = static_cast<Index>(values.size());
  return Tensor(NDArray::from_vector(values, {rows, n / rows}));
}

}  // namespace

TEST_CASE("gradcheck: the whole tiny GPT (2 blocks, 2 heads) in float64", "[lesson12][gradcheck]") {
  Generator gen(1);
  Gpt model(tiny(), gen);
  model.to(kFloat64);
  const Tensor x = ids({0, 1, 2, 3, 4, 0, 3, 3, 2, 1}, 2),
               y = ids({1, 2, 3, 4, 0, 3, 3, 2, 1, 4}, 2);
  const auto result =
      gradcheck([&](const std::vector<Tensor>&) { return nn::cross_entropy(model.forward(x), y); },
                model.parameters());
  INFO(result.report);
  CHECK(result.ok);
  CHECK(result.elements_checked == model.parameter_count());
}

TEST_CASE("gradcheck: the attention-only model in float64", "[lesson12][gradcheck]") {
  Generator gen(2);
  AttentionOnly model(5, 4, 4, 2, 2, gen);
  model.to(kFloat64);
  const Tensor x = ids({0, 1, 0, 1}), y = ids({1, 0, 1, 0});
  const auto result =
      gradcheck([&](const std::vector<Tensor>&) { return nn::cross_entropy(model.forward(x), y); },
                model.parameters());
  INFO(result.report);
  CHECK(result.ok);
}

TEST_CASE("causal: changing character t+1 leaves the outputs up to t bit-identical", "[lesson12]") {
  Generator gen(3);
  Gpt model(tiny(), gen);
  NoGradGuard no_graph;
  const std::vector<std::int64_t> base = {1, 2, 3, 4, 0, 1};
  const NDArray reference = model.forward(ids(base)).data().clone();
  for (Index t = 0; t + 1 < 6; ++t) {
    std::vector<std::int64_t> changed = base;
    changed[static_cast<std::size_t>(t + 1)] = (changed[static_cast<std::size_t>(t + 1)] + 2) % 5;
    const NDArray out = model.forward(ids(changed)).data();
    INFO("changed position " << t + 1);
    const std::size_t bytes = static_cast<std::size_t>((t + 1) * 5) * sizeof(float);
    CHECK(std::memcmp(out.data<float>(), reference.data<float>(), bytes) == 0);
    CHECK(std::memcmp(out.data<float>() + (t + 1) * 5, reference.data<float>() + (t + 1) * 5,
                      5 * sizeof(float)) != 0);  // the changed position itself does change
  }
}

TEST_CASE("the key/value cache gives the logits of full recomputation", "[lesson12]") {
  Generator gen(4);
  Gpt model(tiny(), gen);
  model.to(kFloat64);
  NoGradGuard no_graph;
  const std::vector<std::int64_t> sequence = {3, 1, 4, 1, 0, 2};
  const NDArray full = model.forward(ids(sequence)).data();
  std::vector<nn::KeyValueCache> caches;
  std::vector<double> stepped;
  // The first two characters at once, then one at a time.
  const NDArray first = model.forward_step(ids({3, 1}), caches).data();
  for (double v : first.to_vector()) stepped.push_back(v);
  for (std::size_t i = 2; i < sequence.size(); ++i)
    for (double v : model.forward_step(ids({sequence[i]}), caches).data().to_vector())
      stepped.push_back(v);
  check_close(NDArray::from_vector(std::span<const double>(stepped), full.shape()), full, 1e-12);
  CHECK(caches[0].length() == 6);
  CHECK_THAT(error_message([&] { model.forward_step(ids({1}), caches); }),
             Contains("at most 6 positions"));
  CHECK_THAT(error_message([&] {
               model.forward(ids({1, 1, 1, 1, 1, 1, 1}));
             }),
             Contains("at most 6 positions"));
}

TEST_CASE("sampling with and without the cache writes the same text", "[lesson12]") {
  Generator gen(5);
  GptConfig config = tiny();
  config.context = 32;
  Gpt model(config, gen);
  const data::CharVocabulary vocabulary("abcd\n");
  for (const Sampling s : {Sampling{.temperature = 1, .top_k = 0}, Sampling{0.7, 3}}) {
    Generator a(9), b(9);
    const std::string cached = generate(model, vocabulary, "ab", 20, s, true, a);
    CHECK(cached == generate(model, vocabulary, "ab", 20, s, false, b));
    CHECK(cached.size() == 20);
  }
  Generator c(1);  // longer than the context: the cache restarts, the text goes on
  CHECK(generate(model, vocabulary, "a", 80, {}, true, c).size() == 80);
}

TEST_CASE("top-k 1 and a tiny temperature pick the likeliest character", "[lesson12]") {
  Generator gen(6);
  const std::vector<float> logits = {0.1f, 2.0f, 1.9f, -1.0f};
  for (int i = 0; i < 20; ++i) {
    CHECK(sample_logits(logits, {.temperature = 1, .top_k = 1}, gen) == 1);
    CHECK(sample_logits(logits, {.temperature = 1e-3, .top_k = 0}, gen) == 1);
    CHECK(sample_logits(logits, {.temperature = 1, .top_k = 2}, gen) != 0);
  }
}

TEST_CASE("count models: add-one unigram and bigram by hand", "[lesson12]") {
  // train "abab": unigram p(a) = p(b) = (2+1)/(4+2); bigram p(a|b) = (1+1)/(1+2).
  const CountBaselines c = count_baselines({0, 1, 0, 1}, {1, 0}, 2);
  CHECK_THAT(c.unigram, Catch::Matchers::WithinAbs(std::log(2.0), 1e-12));
  CHECK_THAT(c.bigram,
             Catch::Matchers::WithinAbs((std::log(2.0) - std::log(2.0 / 3.0)) / 2, 1e-12));
}

TEST_CASE("the GRU baseline's size matches the GPT's", "[lesson12]") {
  for (Index target : {30'000, 800'000}) {
    Generator gen(7);
    GruLm gru(80, gru_hidden_for(80, target), gen);
    CHECK(std::abs(static_cast<double>(gru.parameter_count() - target)) < 0.01 * target);
  }
}

TEST_CASE("head shares on hand-made maps", "[lesson12]") {
  // "ab abc". Head 0 looks at t - 1; head 1 at the start of the second word (from t = 3);
  // head 2 three back (from t = 3), which is the same character at t = 3 and 4.
  const std::string text = "ab abc";
  NDArray w = NDArray::zeros({1, 3, 6, 6});
  for (Index i = 0; i < 6; ++i) {
    w.set({0, 0, i, std::max<Index>(i - 1, 0)}, 1);
    w.set({0, 1, i, i >= 3 ? 3 : i}, 1);
    w.set({0, 2, i, i >= 3 ? i - 3 : i}, 1);
  }
  const HeadShares s = head_shares({Tensor(w)}, {text});
  CHECK(s.previous[0] == std::vector<double>{1.0, 0.2, 0.0});    // 1 of 5 queries: t = 4
  CHECK(s.word_start[0] == std::vector<double>{0.0, 1.0, 0.0});  // only "c": its start is 2 back
  CHECK(s.same_char[0] == std::vector<double>{0.0, 0.0, 1.0});   // "a" and "b" at 3 and 4
}
