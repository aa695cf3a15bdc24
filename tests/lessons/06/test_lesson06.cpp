// Lesson 06's model, the RNN encoder-decoder without attention: float64 gradcheck of the whole
// model at tiny sizes with gradcheck's default tolerances (eps 1e-6, atol 1e-5, rtol 1e-3),
// padding invariance, and beam width 1 equal to greedy decoding. What it is trained and
// scored with is tested with the library (tests/seq/).
#include "lessons/06_seq2seq/lesson.h"
#include "seq/test_models.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::seq;
using attend::lesson06::EncoderDecoder;
using Catch::Matchers::WithinAbs;

TEST_CASE("gradcheck of the whole encoder-decoder, with padding", "[lesson06][gradcheck]") {
  for (std::uint64_t seed : {1, 2}) {
    Generator gen(seed);
    EncoderDecoder model(
        {.source_vocabulary = 8, .target_vocabulary = 8, .embedding = 3, .hidden = 4}, gen);
    model.to(kFloat64);
    GradcheckResult r = gradcheck_model(model, tiny_batch(8));
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == model.parameter_count());
  }
}

TEST_CASE("a padded sentence gives what it gives alone (c is its last real state)", "[lesson06]") {
  Generator gen(4);
  EncoderDecoder model(
      {.source_vocabulary = 9, .target_vocabulary = 7, .embedding = 3, .hidden = 5}, gen);
  model.to(kFloat64);
  const Batch both = make_batch({{4, 5, 6, 7, 8}, {8, 4}}, {{4, 5, 6}, {6, 5}});
  const Batch alone = make_batch({{8, 4}}, {{6, 5}});
  const Tensor batched = teacher_forced(model, both).logits;  // [2, 4, 7]
  const Tensor single = teacher_forced(model, alone).logits;  // [1, 3, 7]
  for (Index i = 0; i < 3; ++i)
    for (Index v = 0; v < 7; ++v)
      CHECK_THAT(batched.data().at({1, i, v}), WithinAbs(single.data().at({0, i, v}), 1e-12));
}

TEST_CASE("beam search of width 1 is greedy decoding, token for token", "[lesson06]") {
  const DateTask& task = small_task();
  for (std::uint64_t seed : {1, 2, 3}) {
    Generator gen(seed);
    EncoderDecoder model(tiny_date_sizes(task), gen);
    std::vector<std::size_t> rows = {0, 1, 2, 3, 4, 5, 6, 7};
    const Batch batch = date_batch(task, task.test, rows);
    const std::vector<Decoded> greedy = greedy_decode(model, batch.source, batch.source_mask, 12);
    REQUIRE(greedy.size() == 8);
    for (std::size_t i : rows) {
      const Batch one = date_batch(task, task.test, {i});
      const Decoded beam =
          beam_search(model, one.source, one.source_mask, {.width = 1, .max_length = 12});
      CHECK(beam.tokens == greedy[i].tokens);
      CHECK(beam.finished == greedy[i].finished);
      CHECK_THAT(beam.log_probability, WithinAbs(greedy[i].log_probability, 1e-4));
      CHECK(greedy[i].weights.empty());  // no attention, nothing recorded
    }
  }
}
