// seq/date_evaluation.h: exact match, accuracy by input length and by format, the length
// curve's CSV file, batched greedy predictions, and the heatmap labels.
#include <filesystem>
#include <fstream>

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

TEST_CASE("exact match, and accuracy by input length and by format", "[seq]") {
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

TEST_CASE("the accuracy curve survives its CSV file, and bad files are named", "[seq]") {
  const auto folder = std::filesystem::temp_directory_path() / "attend_seq_curve";
  std::filesystem::create_directories(folder);
  const std::string path = (folder / "curve.csv").string();
  const std::vector<LengthBucket> buckets = {{6, 9, 10, 7}, {10, 13, 4, 4}};
  write_length_curve(path, buckets);
  const std::vector<LengthBucket> back = read_length_curve(path);
  REQUIRE(back.size() == 2);
  CHECK((back[0].low == 6 && back[0].high == 9 && back[0].count == 10 && back[0].correct == 7));
  CHECK((back[1].low == 10 && back[1].correct == 4));
  CHECK_THAT(error_message([&] { read_length_curve((folder / "missing.csv").string()); }),
             Contains("cannot open") && Contains("No such file or directory"));
  std::ofstream(folder / "header.csv") << "a,b\n1,2\n";
  CHECK_THAT(error_message([&] { read_length_curve((folder / "header.csv").string()); }),
             Contains("is not an accuracy curve"));
  std::ofstream(folder / "row.csv") << "low,high,count,correct,accuracy\n6,9,3,5,1.6\n";
  CHECK_THAT(error_message([&] { read_length_curve((folder / "row.csv").string()); }),
             Contains("line 2"));
}

TEST_CASE("predict_dates decodes in batches, in order", "[seq]") {
  const DateTask& task = small_task();
  Generator gen(7);
  AttentionSeq2Seq model(tiny_date_sizes(task), Scoring::kAdditive, Readout::kMaxout, gen);
  const std::vector<std::string> all = predict_dates(model, task, task.test, 250);
  const std::vector<std::string> small_batches = predict_dates(model, task, task.test, 7);
  REQUIRE(all.size() == task.test.size());
  CHECK(all == small_batches);
}

TEST_CASE("heatmap labels: a space is drawn as '_', one label per token, then <eos>", "[seq]") {
  CHECK(character_labels("3 mar") == std::vector<std::string>{"3", "_", "m", "a", "r"});
  const Vocabulary target = date_target_vocabulary();
  Decoded d;
  d.tokens = target.encode_characters("20-");
  d.tokens.push_back(Vocabulary::kUnk);
  CHECK(output_labels(target, d) == std::vector<std::string>{"2", "0", "-", "<unk>"});
  d.finished = true;
  CHECK(output_labels(target, d).back() == "<eos>");
}

TEST_CASE("beam search against greedy on the first dates, width 1 checked", "[seq]") {
  const DateTask& task = small_task();
  Generator gen(8);
  AttentionSeq2Seq model(tiny_date_sizes(task), Scoring::kAdditive, Readout::kMaxout, gen);
  const std::vector<Decoded> greedy = decode_dates(model, task, task.test);
  const BeamComparison wide = compare_beam_with_greedy(model, task, task.test, greedy, 6,
                                                       {.width = 3, .max_length = 12}, 4);
  CHECK(wide.dates == 6);
  CHECK(wide.width_one_checked == 4);
  CHECK(wide.width_one_same == 4);
  // Width 1 is greedy: the same exact match on the same dates.
  const BeamComparison narrow = compare_beam_with_greedy(model, task, task.test, greedy, 1000,
                                                         {.width = 1, .max_length = 12}, 0);
  CHECK(narrow.dates == task.test.size());
  CHECK(narrow.width_one_checked == 0);
  CHECK(narrow.beam_exact_match == narrow.greedy_exact_match);
  CHECK(narrow.greedy_exact_match == exact_match(task.test, date_strings(task, greedy)));
  CHECK_THAT(error_message([&] { compare_beam_with_greedy(model, task, task.test, {}, 3, {}); }),
             Contains("40 examples and 0 greedy outputs"));
}
