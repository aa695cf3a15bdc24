// seq/batch.h and seq/date_task.h: padded batches with masks, batches of similar lengths, the
// date vocabularies and the fixed held-out dates.
#include <set>
#include <tuple>

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

std::vector<std::int64_t> row_ids(const Tensor& ids, Index row) {
  std::vector<std::int64_t> out;
  for (Index j = 0; j < ids.size(1); ++j)
    out.push_back(static_cast<std::int64_t>(ids.data().at({row, j})));
  return out;
}

}  // namespace

TEST_CASE("make_batch pads, masks and shifts the target for teacher forcing", "[seq]") {
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

TEST_CASE("the date vocabularies cover every character of every format", "[seq]") {
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

TEST_CASE("the held-out dates do not depend on the training size", "[seq]") {
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

TEST_CASE("length-sorted batches: every example once, sorted within a pool", "[seq]") {
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
