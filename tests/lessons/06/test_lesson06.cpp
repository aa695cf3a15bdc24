// Lesson 06's functions: batches and masks, the date task's splits and vocabularies, the
// encoder-decoder (float64 gradcheck at tiny sizes with gradcheck's default tolerances: eps
// 1e-6, atol 1e-5, rtol 1e-3; padding invariance), greedy decoding, beam search (width 1
// equals greedy; a hand-built model where beam search beats greedy; the length penalty), the
// training loop, and the date evaluation.
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "lessons/06_seq2seq/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson06;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

std::vector<std::int64_t> row_ids(const Tensor& ids, Index row) {
  std::vector<std::int64_t> out;
  for (Index j = 0; j < ids.size(1); ++j)
    out.push_back(static_cast<std::int64_t>(ids.data().at({row, j})));
  return out;
}

const DateTask& small_task() {
  static const DateTask task = make_date_task(300, 40, 40, 5);
  return task;
}

ModelSizes tiny_sizes(const DateTask& task) {
  return {.source_vocabulary = task.source_vocabulary.size(),
          .target_vocabulary = task.target_vocabulary.size(),
          .embedding = 4,
          .hidden = 6};
}

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

TEST_CASE("make_batch pads, masks and shifts the target for teacher forcing", "[lesson06]") {
  Batch b = make_batch({{7, 8, 9}, {7}}, {{5, 6}, {5, 6, 6, 5}});
  CHECK(b.size() == 2);
  CHECK(b.source.shape() == Shape{2, 3});
  CHECK(row_ids(b.source, 1) == std::vector<std::int64_t>{7, 0, 0});
  CHECK(b.source_mask.dtype() == kFloat32);
  CHECK(b.source_mask.data().to_vector() == std::vector<double>{1, 1, 1, 1, 0, 0});
  // T = longest target + 1 (<bos> in front of the input, <eos> after the target).
  CHECK(b.decoder_input.shape() == Shape{2, 5});
  CHECK(row_ids(b.decoder_input, 0) == std::vector<std::int64_t>{1, 5, 6, 0, 0});
  CHECK(row_ids(b.target, 0) == std::vector<std::int64_t>{5, 6, 2, 0, 0});
  CHECK(row_ids(b.decoder_input, 1) == std::vector<std::int64_t>{1, 5, 6, 6, 5});
  CHECK(row_ids(b.target, 1) == std::vector<std::int64_t>{5, 6, 6, 5, 2});
  CHECK_THAT(error_message([] {
               make_batch({{7}, {}}, {{5}, {5}});
             }),
             Contains("source 1 is empty"));
  CHECK_THAT(error_message([] {
               make_batch({{7}}, {{5}, {5}});
             }),
             Contains("1 sources and 2 targets"));
}

TEST_CASE("the date vocabularies cover every character of every format", "[lesson06]") {
  const Vocabulary source = date_source_vocabulary(), target = date_target_vocabulary();
  CHECK(target.size() == 4 + 11);
  Generator gen(3);
  for (int trial = 0; trial < 1400; ++trial) {
    const DateExample e = data::random_date(gen, trial % data::kDateFormats);
    for (std::int64_t id : source.encode_characters(e.input)) CHECK(id != Vocabulary::kUnk);
    for (std::int64_t id : target.encode_characters(e.output)) CHECK(id != Vocabulary::kUnk);
    CHECK(target.decode_characters(target.encode_characters(e.output)) == e.output);
  }
}

TEST_CASE("the held-out dates do not depend on the training size", "[lesson06]") {
  const DateTask small = make_date_task(100, 20, 50, 9), large = make_date_task(700, 20, 50, 9);
  REQUIRE(small.test.size() == 50);
  REQUIRE(large.train.size() == 700);
  for (std::size_t i = 0; i < 50; ++i) CHECK(small.test[i].input == large.test[i].input);
  for (std::size_t i = 0; i < 20; ++i)
    CHECK(small.validation[i].input == large.validation[i].input);
  // No (date, format) pair in two splits.
  std::set<std::tuple<int, int, int, int>> seen;
  for (const auto* split : {&large.train, &large.validation, &large.test})
    for (const DateExample& e : *split)
      CHECK(seen.insert({e.year, e.month, e.day, e.format}).second);
  CHECK(make_date_task(100, 20, 50, 10).test[0].input != small.test[0].input);
}

TEST_CASE("length-sorted batches: every example once, sorted within a pool", "[lesson06]") {
  std::vector<Index> lengths;
  Generator data_gen(1);
  for (int i = 0; i < 1000; ++i) lengths.push_back(5 + data_gen.randint(20));
  Generator gen(2);
  const auto batches = length_sorted_batches(lengths, 16, gen, 4);
  std::multiset<std::size_t> seen;
  Index spread = 0;
  for (const auto& batch : batches) {
    CHECK(batch.size() <= 16);
    CHECK_FALSE(batch.empty());
    for (std::size_t i = 0; i + 1 < batch.size(); ++i)
      CHECK(lengths[batch[i]] <= lengths[batch[i + 1]]);
    spread += lengths[batch.back()] - lengths[batch.front()];
    seen.insert(batch.begin(), batch.end());
  }
  CHECK(seen.size() == 1000);
  CHECK(std::set<std::size_t>(seen.begin(), seen.end()).size() == 1000);
  // Pools of 64 similar lengths: a batch spans far less than the 19 of the whole range.
  CHECK(static_cast<double>(spread) / static_cast<double>(batches.size()) < 5);
  Generator again(2);
  CHECK(length_sorted_batches(lengths, 16, again, 4) == batches);
  CHECK_THAT(error_message([&] { length_sorted_batches(lengths, 0, gen); }),
             Contains("batch size 0"));
}

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
  Generator gen(1);
  EncoderDecoder float32(
      {.source_vocabulary = 8, .target_vocabulary = 8, .embedding = 3, .hidden = 4}, gen);
  CHECK_THAT(error_message([&] { gradcheck_model(float32, tiny_batch(8)); }),
             Contains("to(kFloat64)"));
  CHECK_THAT(error_message([] { tiny_batch(5); }), Contains("at least 6"));
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

TEST_CASE("the loss is the mean cross-entropy over the real target tokens", "[lesson06]") {
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

TEST_CASE("beam search of width 1 is greedy decoding, token for token", "[lesson06]") {
  const DateTask& task = small_task();
  for (std::uint64_t seed : {1, 2, 3}) {
    Generator gen(seed);
    EncoderDecoder model(tiny_sizes(task), gen);
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

TEST_CASE("beam search finds the more probable output that greedy misses", "[lesson06]") {
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

TEST_CASE("the length penalty decides between a short and a long output", "[lesson06]") {
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

TEST_CASE("decoding stops at max_length and says so", "[lesson06]") {
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

TEST_CASE("training lowers the loss, logs every epoch and keeps its budget", "[lesson06]") {
  const DateTask& task = small_task();
  Generator gen(6);
  EncoderDecoder model(tiny_sizes(task), gen);
  std::vector<Index> lengths;
  for (const DateExample& e : task.train) lengths.push_back(static_cast<Index>(e.input.size()));
  auto batches = [&] {
    std::vector<Batch> out;
    for (const auto& rows : length_sorted_batches(lengths, 50, gen))
      out.push_back(date_batch(task, task.train, rows));
    return out;
  };
  int validations = 0;
  auto validate = [&] { return ++validations * 0.1; };
  const std::string log =
      (std::filesystem::temp_directory_path() / "attend_lesson06_training.csv").string();
  TrainingResult r = train(
      model, batches, validate,
      {.max_epochs = 4, .seconds = 600, .learning_rate = 1e-2, .stop_at = 0.3, .log_path = log});
  CHECK(r.epochs == 3);  // validation reached 0.3 after the third epoch
  CHECK(r.reached_target);
  CHECK(r.steps == 18);  // 6 batches of 50 per epoch
  CHECK(r.train_loss.back() < r.train_loss.front());
  std::ifstream csv(log);
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 4);  // header + 3 epochs

  TrainingResult quick = train(model, batches, validate, {.max_epochs = 4, .seconds = 1e-9});
  CHECK(quick.out_of_time);
  CHECK(quick.steps == 1);
  CHECK(quick.epochs == 1);
  CHECK_THAT(error_message([&] { train(model, batches, validate, {.max_epochs = 0}); }),
             Contains("at least 1"));
  CHECK_THAT(error_message([&] { train(model, batches, validate, {.learning_rate = -1}); }),
             Contains("learning rate"));
}

TEST_CASE("exact match, and accuracy by input length and by format", "[lesson06]") {
  std::vector<DateExample> examples = {data::make_date(2015, 3, 3, 1),   // "3/3/15"      6
                                       data::make_date(2015, 3, 3, 10),  // "20150303"    8
                                       data::make_date(2015, 3, 3, 6),   // "03.03.2015" 10
                                       data::make_date(2015, 3, 3, 0)};  // 21 characters
  REQUIRE(examples[3].input.size() == 21);
  const std::vector<std::string> predictions = {"2015-03-03", "2015-03-30", "2015-03-03",
                                                "2015-03-03"};
  CHECK(exact_match(examples, predictions) == 0.75);
  const std::vector<LengthBucket> buckets = accuracy_by_length(examples, predictions);
  REQUIRE(buckets.size() == 3);
  CHECK((buckets[0].low == 6 && buckets[0].high == 9 && buckets[0].count == 2 &&
         buckets[0].correct == 1));
  CHECK((buckets[1].low == 10 && buckets[1].high == 13 && buckets[1].count == 1));
  CHECK((buckets[2].low == 18 && buckets[2].high == 21 && buckets[2].correct == 1));
  CHECK(buckets[0].accuracy() == 0.5);
  CHECK(bucket_middle(buckets[0]) == 7.5);
  const std::vector<FormatScore> formats = accuracy_by_format(examples, predictions);
  REQUIRE(formats.size() == static_cast<std::size_t>(data::kDateFormats));
  CHECK((formats[10].count == 1 && formats[10].correct == 0));
  CHECK((formats[1].count == 1 && formats[1].correct == 1));
  CHECK(formats[2].count == 0);
  CHECK_THAT(error_message([&] { exact_match(examples, {"x"}); }), Contains("4 examples and 1"));
}

TEST_CASE("the accuracy curve survives its CSV file, and bad files are named", "[lesson06]") {
  const auto folder = std::filesystem::temp_directory_path() / "attend_lesson06_curve";
  std::filesystem::create_directories(folder);
  const std::string path = (folder / "curve.csv").string();
  const std::vector<LengthBucket> buckets = {{6, 9, 10, 7}, {10, 13, 4, 4}};
  write_length_curve(path, buckets);
  const std::vector<LengthBucket> back = read_length_curve(path);
  REQUIRE(back.size() == 2);
  CHECK((back[0].low == 6 && back[0].high == 9 && back[0].count == 10 && back[0].correct == 7));
  CHECK((back[1].low == 10 && back[1].correct == 4));
  CHECK_THAT(error_message([&] { read_length_curve((folder / "missing.csv").string()); }),
             Contains("cannot read"));
  std::ofstream(folder / "header.csv") << "a,b\n1,2\n";
  CHECK_THAT(error_message([&] { read_length_curve((folder / "header.csv").string()); }),
             Contains("is not an accuracy curve"));
  std::ofstream(folder / "row.csv") << "low,high,count,correct,accuracy\n6,9,3,5,1.6\n";
  CHECK_THAT(error_message([&] { read_length_curve((folder / "row.csv").string()); }),
             Contains("line 2"));
}

TEST_CASE("predict_dates decodes in batches, in order", "[lesson06]") {
  const DateTask& task = small_task();
  Generator gen(7);
  EncoderDecoder model(tiny_sizes(task), gen);
  const std::vector<std::string> all = predict_dates(model, task, task.test, 250);
  const std::vector<std::string> small_batches = predict_dates(model, task, task.test, 7);
  REQUIRE(all.size() == task.test.size());
  CHECK(all == small_batches);
}
