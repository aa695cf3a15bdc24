// Lesson 07's functions: the attention model (float64 gradchecks of the whole model at tiny
// sizes, both scoring functions, gradcheck's default tolerances: eps 1e-6, atol 1e-5, rtol
// 1e-3), its attention weights (rows sum to 1, padding gets exactly 0, scored from the
// previous state, s_0 from h_bwd_1), padding invariance, beam width 1 equals greedy,
// alignment accuracy on hand-built cases, BLEU on hand-computed cases, and the word-level
// German-English task.
#include <cmath>

#include "lessons/07_bahdanau/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson07;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

AttentionSeq2Seq tiny_model(std::uint64_t seed, Scoring scoring = Scoring::kAdditive,
                            Readout readout = Readout::kMaxout, Index vocabulary = 8) {
  Generator gen(seed);
  return AttentionSeq2Seq({.source_vocabulary = vocabulary,
                           .target_vocabulary = vocabulary,
                           .embedding = 3,
                           .hidden = 4,
                           .attention = 5,
                           .maxout = 3},
                          scoring, readout, gen);
}

const lesson06::DateTask& small_task() {
  static const lesson06::DateTask task = lesson06::make_date_task(200, 20, 40, 3);
  return task;
}

// The example of a date as the alignment score sees it: spans per output character.
DateExample hand_date() {
  // input "3/3/15" -> "2015-03-03": month span [0,1), day [2,3), year [4,6)
  return data::make_date(2015, 3, 3, 1);
}

// weights[i] puts all its attention on position positions[i] of a `length`-character input.
std::vector<std::vector<double>> one_hot_rows(const std::vector<int>& positions, int length) {
  std::vector<std::vector<double>> rows;
  for (int p : positions) {
    std::vector<double> row(static_cast<std::size_t>(length), 0.0);
    row[static_cast<std::size_t>(p)] = 1.0;
    rows.push_back(row);
  }
  return rows;
}

Words words(std::initializer_list<const char*> list) {
  return Words(list.begin(), list.end());
}

}  // namespace

TEST_CASE("gradcheck of the whole attention model, with padding", "[lesson07][gradcheck]") {
  for (Scoring scoring : {Scoring::kAdditive, Scoring::kGeneral}) {
    for (Readout readout : {Readout::kMaxout, Readout::kLinear}) {
      for (std::uint64_t seed : {1, 2}) {
        INFO(scoring_name(scoring)
             << " scoring, " << readout_name(readout) << " readout, seed " << seed);
        AttentionSeq2Seq model = tiny_model(seed, scoring, readout);
        model.to(kFloat64);
        GradcheckResult r = lesson06::gradcheck_model(model, lesson06::tiny_batch(8));
        INFO(r.report);
        CHECK(r.ok);
        CHECK(r.elements_checked == model.parameter_count());
        CHECK(std::count(r.ops.begin(), r.ops.end(), "softmax") == 1);
        CHECK(std::count(r.ops.begin(), r.ops.end(), "max") == (readout == Readout::kMaxout));
      }
    }
  }
}

TEST_CASE("the maxout deep output by hand", "[lesson07]") {
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
  const Batch batch = lesson06::tiny_batch(8);
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

TEST_CASE("attention rows sum to 1 and padded positions get exactly 0", "[lesson07]") {
  for (DType dtype : {kFloat64, kFloat32}) {
    AttentionSeq2Seq model = tiny_model(3);
    model.to(dtype);
    const Batch batch = lesson06::tiny_batch(8);
    const Tensor weights = lesson06::teacher_forced(model, batch).weights;
    REQUIRE(weights.shape() == Shape{2, 5, 5});  // [B, T, S]
    const lesson06::AttentionInvariants inv = lesson06::check_attention(weights, batch.source_mask);
    CHECK(inv.rows == 10);
    CHECK(inv.masked_positions == 10);  // sentence 2 has 2 padded positions, at all 5 steps
    CHECK(inv.largest_masked_weight == 0.0);
    CHECK(inv.largest_row_sum_error < (dtype == kFloat64 ? 1e-14 : 1e-6));
  }
  // The same in what greedy decoding records, which the heatmaps draw.
  AttentionSeq2Seq model = tiny_model(4);
  const Batch batch = lesson06::tiny_batch(8);
  for (const Decoded& d : lesson06::greedy_decode(model, batch.source, batch.source_mask, 6)) {
    REQUIRE_FALSE(d.weights.empty());
    for (const std::vector<double>& alpha : d.weights) {
      double sum = 0;
      for (double a : alpha) sum += a;
      CHECK_THAT(sum, WithinAbs(1.0, 1e-6));
    }
  }
  const std::vector<Decoded> decoded =
      lesson06::greedy_decode(model, batch.source, batch.source_mask, 6);
  for (const std::vector<double>& alpha : decoded[1].weights)
    CHECK((alpha[3] == 0.0 && alpha[4] == 0.0));
}

TEST_CASE("the invariant check itself catches a bad row and a masked weight", "[lesson07]") {
  const Tensor mask(NDArray::from_list({1, 1, 0}, {1, 3}));
  const Tensor good(f64({0.25, 0.75, 0.0}, {1, 1, 3}));
  const Tensor leaks(f64({0.25, 0.7, 0.05}, {1, 1, 3}));
  const Tensor short_row(f64({0.25, 0.5, 0.0}, {1, 1, 3}));
  CHECK(lesson06::check_attention(good, mask).largest_masked_weight == 0.0);
  CHECK(lesson06::check_attention(good, mask).largest_row_sum_error == 0.0);
  CHECK_THAT(lesson06::check_attention(leaks, mask).largest_masked_weight, WithinAbs(0.05, 1e-15));
  CHECK_THAT(lesson06::check_attention(short_row, mask).largest_row_sum_error,
             WithinAbs(0.25, 1e-15));
  CHECK_THAT(error_message([&] { lesson06::check_attention(Tensor(), mask); }),
             Contains("no attention"));
}

TEST_CASE("a padded sentence gives what it gives alone, attention included", "[lesson07]") {
  AttentionSeq2Seq model = tiny_model(5, Scoring::kAdditive, Readout::kMaxout, 9);
  model.to(kFloat64);
  const Batch both = lesson06::make_batch({{4, 5, 6, 7, 8}, {8, 4, 6}}, {{4, 5, 6}, {6, 5}});
  const Batch alone = lesson06::make_batch({{8, 4, 6}}, {{6, 5}});
  const lesson06::TeacherForced batched = lesson06::teacher_forced(model, both);
  const lesson06::TeacherForced single = lesson06::teacher_forced(model, alone);
  for (Index i = 0; i < 3; ++i) {
    for (Index v = 0; v < 9; ++v)
      CHECK_THAT(batched.logits.data().at({1, i, v}),
                 WithinAbs(single.logits.data().at({0, i, v}), 1e-12));
    for (Index j = 0; j < 3; ++j)
      CHECK_THAT(batched.weights.data().at({1, i, j}),
                 WithinAbs(single.weights.data().at({0, i, j}), 1e-12));
  }
}

TEST_CASE("s_0 comes from h_bwd_1, and attention from the previous state", "[lesson07]") {
  AttentionSeq2Seq model = tiny_model(6);
  model.to(kFloat64);
  const Batch batch = lesson06::tiny_batch(8);
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

TEST_CASE("beam search of width 1 is greedy decoding, token for token (attention)", "[lesson07]") {
  const lesson06::DateTask& task = small_task();
  for (Scoring scoring : {Scoring::kAdditive, Scoring::kGeneral}) {
    for (std::uint64_t seed : {1, 2}) {
      Generator gen(seed);
      AttentionSeq2Seq model({.source_vocabulary = task.source_vocabulary.size(),
                              .target_vocabulary = task.target_vocabulary.size(),
                              .embedding = 4,
                              .hidden = 6,
                              .attention = 5,
                              .maxout = 4},
                             scoring, seed == 1 ? Readout::kMaxout : Readout::kLinear, gen);
      const std::vector<Decoded> greedy = decode_dates(model, task, task.test, 10);
      for (std::size_t i = 0; i < 10; ++i) {
        const Batch one = lesson06::date_batch(task, task.test, {i});
        const Decoded beam = lesson06::beam_search(model, one.source, one.source_mask,
                                                   {.width = 1, .max_length = 12});
        CHECK(beam.tokens == greedy[i].tokens);
        REQUIRE(beam.weights.size() == greedy[i].weights.size());
        for (std::size_t k = 0; k < beam.weights.size(); ++k)
          for (std::size_t j = 0; j < beam.weights[k].size(); ++j)
            CHECK_THAT(beam.weights[k][j], WithinAbs(greedy[i].weights[k][j], 1e-6));
      }
    }
  }
}

TEST_CASE("alignment accuracy on hand-built attention", "[lesson07]") {
  const DateExample e = hand_date();
  REQUIRE(e.input == "3/3/15");
  // Output "2015-03-03": digits 0-3 from the year [4,6), 5-6 from the month [0,1), 8-9 from
  // the day [2,3); 4 and 7 ('-') are skipped whatever they look at.
  //              y  y  y  y  -  m  m  -  d  d  <eos>
  const std::vector<int> right = {4, 5, 5, 4, 1, 0, 0, 3, 2, 2, 5};
  AlignmentScore all = alignment_accuracy({e}, {one_hot_rows(right, 6)});
  CHECK(all.digits == 8);
  CHECK(all.hits == 8);
  CHECK(all.accuracy() == 1.0);
  // Three digits look elsewhere: y at the '/' (3), m at the day (2), d at the year (5).
  const std::vector<int> three_wrong = {4, 3, 5, 4, 0, 2, 0, 0, 2, 5, 0};
  CHECK(alignment_accuracy({e}, {one_hot_rows(three_wrong, 6)}).hits == 5);
  // An output that stopped after 6 characters: the last 4 digits are misses.
  const std::vector<int> cut = {4, 5, 5, 4, 1, 0};
  AlignmentScore short_output = alignment_accuracy({e}, {one_hot_rows(cut, 6)});
  CHECK((short_output.digits == 8 && short_output.hits == 5));
  // Ties go to the first maximum: [0.5 at 3, 0.5 at 4] counts position 3 ('/'), a miss.
  std::vector<std::vector<double>> tie = one_hot_rows(right, 6);
  tie[0] = {0, 0, 0, 0.5, 0.5, 0};
  CHECK(alignment_accuracy({e}, {tie}).hits == 7);
  CHECK_THAT(error_message([&] {
               alignment_accuracy({e, e}, {tie});
             }),
             Contains("2 examples and 1"));
}

TEST_CASE("attention matrices and labels for the heatmaps", "[lesson07]") {
  CHECK(character_labels("3 mar") == std::vector<std::string>{"3", "_", "m", "a", "r"});
  Decoded d;
  d.weights = {{0.5, 0.5, 0.0}, {0.0, 1.0, 0.0}};
  const NDArray m = attention_matrix(d, 2);  // the padding column dropped
  CHECK(m.shape() == Shape{2, 2});
  CHECK(m.to_vector() == std::vector<double>{0.5, 0.5, 0.0, 1.0});
  CHECK_THAT(error_message([&] { attention_matrix(d, 4); }), Contains("fewer than the 4"));
  CHECK_THAT(error_message([] { attention_matrix(Decoded{}, 2); }), Contains("no recorded"));
}

TEST_CASE("BLEU: a perfect candidate scores 1, clipping and brevity by hand", "[lesson07]") {
  const Words ref = words({"the", "cat", "is", "on", "the", "mat"});
  const Bleu same = corpus_bleu({ref}, {ref});
  CHECK_THAT(same.score, WithinAbs(1.0, 1e-15));
  CHECK(same.brevity_penalty == 1.0);
  CHECK(same.matches == std::vector<Index>{6, 5, 4, 3});

  // Papineni et al.'s example: "the" 7 times. Clipped to the reference's 2: p1 = 2/7.
  const Words the7 = words({"the", "the", "the", "the", "the", "the", "the"});
  const Bleu clipped = corpus_bleu({the7}, {ref}, {.max_order = 1});
  CHECK_THAT(clipped.precisions[0], WithinAbs(2.0 / 7.0, 1e-15));
  CHECK_THAT(clipped.score, WithinAbs(2.0 / 7.0, 1e-15));  // c = 7 > r = 6: BP = 1

  // "the cat is on": every n-gram matches (p_n = 1), but c = 4 < r = 6:
  // BLEU = BP = exp(1 - 6/4) = exp(-0.5).
  const Bleu brief = corpus_bleu({words({"the", "cat", "is", "on"})}, {ref});
  CHECK(brief.precisions == std::vector<double>{1, 1, 1, 1});
  CHECK_THAT(brief.brevity_penalty, WithinAbs(std::exp(-0.5), 1e-15));
  CHECK_THAT(brief.score, WithinAbs(std::exp(-0.5), 1e-15));
}

TEST_CASE("BLEU: orders without matches, smoothing, and corpus sums", "[lesson07]") {
  // Candidate "the cat sat on a mat" against "the cat is on the mat":
  // 1-grams: the cat on mat match (4/6); 2-grams: "the cat" (1/5); 3- and 4-grams: 0/4, 0/3.
  const Words ref = words({"the", "cat", "is", "on", "the", "mat"});
  const Words cand = words({"the", "cat", "sat", "on", "a", "mat"});
  const Bleu plain = corpus_bleu({cand}, {ref});
  CHECK(plain.matches == std::vector<Index>{4, 1, 0, 0});
  CHECK(plain.totals == std::vector<Index>{6, 5, 4, 3});
  CHECK(plain.score == 0.0);  // one empty order zeroes BLEU
  // Chen & Cherry 1: p3 = 0.1/4, p4 = 0.1/3; BLEU = (4/6 * 1/5 * 0.025 * 0.1/3)^(1/4).
  const double expected = std::pow(4.0 / 6 * 1.0 / 5 * 0.1 / 4 * 0.1 / 3, 0.25);
  CHECK_THAT(corpus_bleu({cand}, {ref}, {.smooth = true}).score, WithinRel(expected, 1e-12));
  CHECK_THAT(sentence_bleu(cand, ref), WithinRel(expected, 1e-12));

  // Corpus BLEU sums the counts before dividing. Sentence 1 perfect (4 words), sentence 2
  // "a b" against "a c": p1 = (4 + 1) / (4 + 2), p2 = (3 + 0) / (3 + 1), c = r = 6.
  const Bleu corpus =
      corpus_bleu({words({"w", "x", "y", "z"}), words({"a", "b"})},
                  {words({"w", "x", "y", "z"}), words({"a", "c"})}, {.max_order = 2});
  CHECK_THAT(corpus.score, WithinRel(std::sqrt(5.0 / 6 * 3.0 / 4), 1e-12));
  // ... which is not the mean of the two sentences' BLEU (1 and 0).
  CHECK(corpus.score != 0.5);
  CHECK(corpus_bleu({Words{}}, {ref}).score == 0.0);  // an empty output
  CHECK_THAT(error_message([&] { corpus_bleu({cand}, {}); }), Contains("1 candidates and 0"));
}

TEST_CASE("word vocabularies: frequent words, ties alphabetical, rare ones <unk>", "[lesson07]") {
  const std::vector<Words> sentences = {words({"b", "a", "c", "b"}), words({"a", "d", "b"})};
  const Vocabulary v = word_vocabulary(sentences, 2);
  CHECK(v.size() == 4 + 2);
  CHECK(v.token(4) == "b");  // 3 times
  CHECK(v.token(5) == "a");  // 2 times
  CHECK(v.id("c") == Vocabulary::kUnk);
  CHECK(word_vocabulary(sentences, 1).token(6) == "c");  // c and d once each: alphabetical
  CHECK_THAT(unknown_share(v, {words({"a", "c", "d", "b"})}), WithinAbs(0.5, 1e-15));
}

TEST_CASE("the German-English task: vocabularies from training only, batches", "[lesson07]") {
  std::vector<data::SentencePair> pairs;
  for (int i = 0; i < 30; ++i)
    pairs.push_back({fmt::format("Ich sehe {}.", i % 3 == 0 ? "Hunde" : "Katzen"),
                     fmt::format("I see {}.", i % 3 == 0 ? "dogs" : "cats")});
  pairs.push_back({"Ganz neue Wörter hier.", "Entirely new words here."});
  const TranslationTask task = make_translation_task(pairs, 5, 6, 1, 2);
  CHECK(task.train_source.size() == 20);
  CHECK(task.test_target.size() == 6);
  CHECK(task.source_vocabulary.contains("sehe"));
  CHECK_FALSE(task.source_vocabulary.contains("wörter"));  // seen once at most
  const Batch b = translation_batch(task, task.train_source, task.train_target, {0, 1});
  CHECK(b.source.shape() == Shape{2, 4});  // "ich sehe katzen ."
  CHECK(words_of(task.target_vocabulary, {4, 5}).size() == 2);
}
