// The model of lesson 11, seq/transformer_seq2seq.h: float64 gradchecks of the whole model at
// tiny sizes (gradcheck's default tolerances: eps 1e-6, atol 1e-5, rtol 1e-3), teacher
// forcing in one pass equal to T steps, greedy decoding with the key/value cache equal to
// recomputing the prefix, beam width 1 equal to greedy, padding invariance, and its errors.
#include "attend.h"
#include "support.h"

using namespace attend;
using namespace attend::seq;
using attend::data::Vocabulary;
using Catch::Matchers::Contains;

namespace {

constexpr Index kVocabulary = 8;

TransformerSizes tiny(Positions positions, bool norm_first) {
  TransformerSizes s = tiny_transformer_sizes(kVocabulary);
  s.positions = positions;
  s.norm_first = norm_first;
  return s;
}

// The largest |a - b| of two arrays of the same shape.
double largest_difference(const NDArray& a, const NDArray& b) {
  REQUIRE(a.shape() == b.shape());
  const NDArray x = a.to(kFloat64), y = b.to(kFloat64);
  double largest = 0;
  for (Index i = 0; i < x.numel(); ++i)
    largest = std::max(largest, std::abs(x.data<double>()[i] - y.data<double>()[i]));
  return largest;
}

// Three source sentences of different lengths (so two are padded) with ids below 8.
Batch three_sentences() {
  return make_batch({{4, 5, 7, 4, 5, 6}, {7, 4}, {6, 6, 5, 4}}, {{5, 4}, {4, 7, 7}, {6}});
}

}  // namespace

TEST_CASE("gradcheck of the whole Transformer, with padding", "[lesson11][gradcheck]") {
  // Each kind of positions and each place of the norm, at least once (the positions act
  // before the first layer, the norm inside every layer: the six pairs add nothing the
  // three do not check, and cost twice the time under the sanitizers).
  const std::pair<Positions, bool> cases[] = {
      {Positions::kSinusoidal, false}, {Positions::kLearned, true}, {Positions::kNone, false}};
  for (const auto& [positions, norm_first] : cases) {
    INFO(positions_name(positions) << " positions, norm_first " << norm_first);
    Generator gen(3);
    TransformerSeq2Seq model(tiny(positions, norm_first), gen);
    model.to(kFloat64);
    const GradcheckResult r = gradcheck_model(model, tiny_batch(kVocabulary));
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == model.parameter_count());
  }
}

TEST_CASE("gradcheck of the Transformer with its output tied to the embedding",
          "[lesson11][gradcheck]") {
  Generator gen(9);
  TransformerSizes s = tiny(Positions::kSinusoidal, false);
  s.tie_output = true;
  TransformerSeq2Seq model(s, gen);
  model.to(kFloat64);
  const GradcheckResult r = gradcheck_model(model, tiny_batch(kVocabulary));
  INFO(r.report);
  CHECK(r.ok);
  CHECK(model.output.weight.same_as(model.target_embedding.weight));
  s.tie_output = false;
  TransformerSeq2Seq untied(s, gen);
  CHECK(untied.parameter_count() - model.parameter_count() == kVocabulary * s.d_model);
}

TEST_CASE("teacher forcing in one pass equals the steps one at a time", "[lesson11]") {
  for (bool use_cache : {true, false}) {
    Generator gen(4);
    TransformerSeq2Seq model(tiny(Positions::kSinusoidal, false), gen);
    model.eval();
    model.use_cache = use_cache;
    const Batch batch = three_sentences();
    const Encoded encoded = model.encode(batch.source, batch.source_mask);
    const DecoderSteps all = model.decode_all(encoded, batch.decoder_input);
    Tensor state;
    for (Index i = 0; i < batch.decoder_input.size(1); ++i) {
      const Tensor tokens = squeeze(slice(batch.decoder_input, 1, i, i + 1), 1);
      const DecoderStep step = model.step(encoded, state, tokens);
      state = step.state;
      INFO("use_cache " << use_cache << ", step " << i);
      CHECK(largest_difference(step.features.data(),
                               squeeze(slice(all.features, 1, i, i + 1), 1).data()) < 1e-5);
      CHECK(largest_difference(step.weights.data(),
                               squeeze(slice(all.weights, 1, i, i + 1), 1).data()) < 1e-6);
    }
  }
}

TEST_CASE("greedy decoding: the key/value cache gives what recomputation gives", "[lesson11]") {
  for (bool norm_first : {false, true}) {
    Generator gen(5);
    TransformerSeq2Seq model(tiny(Positions::kLearned, norm_first), gen);
    model.eval();
    const Batch batch = three_sentences();
    model.use_cache = true;
    const std::vector<Decoded> cached = greedy_decode(model, batch.source, batch.source_mask, 10);
    model.use_cache = false;
    const std::vector<Decoded> recomputed =
        greedy_decode(model, batch.source, batch.source_mask, 10);
    REQUIRE(cached.size() == 3);
    for (std::size_t b = 0; b < cached.size(); ++b) {
      INFO("norm_first " << norm_first << ", sentence " << b);
      CHECK(cached[b].tokens == recomputed[b].tokens);
      CHECK(std::abs(cached[b].log_probability - recomputed[b].log_probability) < 1e-5);
      REQUIRE(cached[b].weights.size() == recomputed[b].weights.size());
      for (std::size_t i = 0; i < cached[b].weights.size(); ++i)
        for (std::size_t j = 0; j < cached[b].weights[i].size(); ++j)
          CHECK(std::abs(cached[b].weights[i][j] - recomputed[b].weights[i][j]) < 1e-6);
    }
  }
}

TEST_CASE("beam search of width 1 is greedy decoding, with and without the cache", "[lesson11]") {
  Generator gen(6);
  TransformerSeq2Seq model(tiny(Positions::kSinusoidal, true), gen);
  model.eval();
  const Batch batch = three_sentences();
  const std::vector<Decoded> greedy = greedy_decode(model, batch.source, batch.source_mask, 10);
  for (bool use_cache : {true, false}) {
    model.use_cache = use_cache;
    for (Index b = 0; b < 3; ++b) {
      const Tensor rows(NDArray::full({1}, static_cast<double>(b), kInt64));
      const Decoded beam =
          beam_search(model, index_select(batch.source, 0, rows),
                      index_select(batch.source_mask, 0, rows), {.width = 1, .max_length = 10});
      CHECK(beam.tokens == greedy[static_cast<std::size_t>(b)].tokens);
    }
  }
}

TEST_CASE("a padded sentence gets the outputs it gets alone; padding gets no attention",
          "[lesson11]") {
  Generator gen(7);
  TransformerSeq2Seq model(tiny(Positions::kSinusoidal, false), gen);
  model.eval();
  const Batch both = three_sentences();
  const Batch alone = make_batch({{7, 4}}, {{4, 7, 7}});
  const TeacherForced batched = teacher_forced(model, both);
  const TeacherForced single = teacher_forced(model, alone);
  const Tensor row = slice(slice(batched.logits, 0, 1, 2), 1, 0, 4);
  CHECK(largest_difference(row.data(), single.logits.data()) < 1e-5);
  // Sentence 1 has 2 real source tokens of 6: columns 2.. get exactly 0 in every layer and head.
  const TransformerAttention maps =
      model.attention_maps(both.source, both.source_mask, both.decoder_input);
  REQUIRE(maps.cross.size() == 1);
  CHECK(maps.cross[0].shape() == Shape{3, 2, 4, 6});
  CHECK(maps.encoder_self[0].shape() == Shape{3, 2, 6, 6});
  const NDArray cross = maps.cross[0].data();
  for (Index h = 0; h < 2; ++h)
    for (Index i = 0; i < 4; ++i)
      for (Index j = 2; j < 6; ++j) CHECK(cross.at({1, h, i, j}) == 0.0);
}

TEST_CASE("the Transformer's errors name what is wrong", "[lesson11]") {
  Generator gen(8);
  TransformerSizes s = tiny(Positions::kSinusoidal, false);
  s.max_length = 4;
  TransformerSeq2Seq model(s, gen);
  const Batch batch = three_sentences();  // sources of 6 positions
  CHECK_THROWS_WITH(
      teacher_forced(model, batch),
      Contains("a source of 6 positions from position 0 is longer than max_length 4"));
  s.heads = 3;  // 8 is not a multiple of 3
  CHECK_THROWS_WITH(TransformerSeq2Seq(s, gen), Contains("must be a positive multiple of"));
  CHECK_THROWS_WITH(parse_positions("rotary"), Contains("'rotary' is not a positional encoding"));
}
