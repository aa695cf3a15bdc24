// The date generator: every format writes a valid input, and the recorded source spans
// really contain the year, month and day the output digits come from (round trip).
#include <set>

#include "support.h"

using namespace attend;
using namespace attend::data;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

const std::vector<std::string> kMonthNames = {"january",   "february", "march",    "april",
                                              "may",       "june",     "july",     "august",
                                              "september", "october",  "november", "december"};

// Reads back what a span holds: a number (with an optional st/nd/rd/th suffix), or a month
// name or its first three letters.
int parse_piece(const std::string& text) {
  for (std::size_t m = 0; m < kMonthNames.size(); ++m)
    if (text == kMonthNames[m] || text == kMonthNames[m].substr(0, 3))
      return static_cast<int>(m) + 1;
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  REQUIRE(digits > 0);
  std::string suffix = text.substr(digits);
  CHECK((suffix.empty() || suffix == "st" || suffix == "nd" || suffix == "rd" || suffix == "th"));
  return std::stoi(text.substr(0, digits));
}

std::string piece(const DateExample& e, const Span& s) {
  return e.input.substr(static_cast<std::size_t>(s.begin),
                        static_cast<std::size_t>(s.end - s.begin));
}

}  // namespace

TEST_CASE("dates: every format, round trip through the source spans", "[nn]") {
  Generator gen(7);
  REQUIRE(kDateFormats >= 12);
  std::set<std::string> shapes_seen;
  for (int trial = 0; trial < 2000; ++trial) {
    DateExample e = random_date(gen, trial % kDateFormats);
    INFO(e.input << " -> " << e.output);
    REQUIRE(e.output.size() == 10);
    CHECK(e.output == fmt::format("{:04}-{:02}-{:02}", e.year, e.month, e.day));
    REQUIRE(e.source.size() == e.output.size());
    CHECK(e.source[4].empty());
    CHECK(e.source[7].empty());
    // Year digits come from the year: all four, or the last two for a two-digit year.
    std::string year = piece(e, e.source[0]);
    if (year.size() == 2)
      CHECK(year == e.output.substr(2, 2));
    else
      CHECK(year == e.output.substr(0, 4));
    for (int i = 1; i < 4; ++i)
      CHECK((e.source[i].begin == e.source[0].begin && e.source[i].end == e.source[0].end));
    CHECK(parse_piece(piece(e, e.source[5])) == e.month);
    CHECK(parse_piece(piece(e, e.source[8])) == e.day);
    // The three spans do not overlap.
    CHECK((e.source[0].end <= e.source[5].begin || e.source[5].end <= e.source[0].begin));
    CHECK((e.source[5].end <= e.source[8].begin || e.source[8].end <= e.source[5].begin));
    shapes_seen.insert(date_format_description(e.format));
  }
  CHECK(shapes_seen.size() == static_cast<std::size_t>(kDateFormats));
}

TEST_CASE("dates: weekdays, ordinals and known examples", "[nn]") {
  CHECK(make_date(2015, 3, 3, 0).input == "tuesday, march 3 2015");
  CHECK(make_date(2000, 1, 1, 9).input == "sat 1 jan 2000");
  CHECK(make_date(2015, 3, 3, 1).input == "3/3/15");
  CHECK(make_date(1999, 12, 31, 8).input == "31-dec-99");
  CHECK(make_date(2011, 11, 11, 7).input == "the 11th of november, 2011");
  CHECK(make_date(2022, 8, 22, 3).input == "august 22nd, 2022");
  CHECK(make_date(2024, 2, 29, 10).input == "20240229");  // a leap day
  CHECK_THAT(error_message([] { make_date(2023, 2, 29, 0); }),
             Contains("2023-2-29 is not a valid date"));
  CHECK_THAT(error_message([] { make_date(2015, 3, 3, kDateFormats); }),
             Contains("format 14 is not one of"));
  CHECK_THAT(error_message([] { make_date(1900, 1, 1, 0); }), Contains("year 1900 is outside"));
}

TEST_CASE("dates: splits are reproducible and disjoint", "[nn]") {
  DateSplits a = make_date_splits(300, 50, 50, 11), b = make_date_splits(300, 50, 50, 11);
  REQUIRE(a.train.size() == 300);
  REQUIRE(a.validation.size() == 50);
  REQUIRE(a.test.size() == 50);
  for (std::size_t i = 0; i < a.train.size(); ++i) CHECK(a.train[i].input == b.train[i].input);
  std::set<std::string> train_inputs;
  for (const auto& e : a.train) train_inputs.insert(e.input);
  for (const auto& e : a.test) CHECK(train_inputs.count(e.input) == 0);
  CHECK(make_date_splits(300, 50, 50, 12).train[0].input != a.train[0].input);
}

TEST_CASE("vocabulary: ids, specials, round trips and padding", "[nn]") {
  Vocabulary chars = Vocabulary::of_characters("0123456789-");
  CHECK(chars.size() == 4 + 11);
  CHECK(chars.token(Vocabulary::kPad) == "<pad>");
  std::vector<std::int64_t> ids = chars.encode_characters("2015-03-03");
  CHECK(chars.decode_characters(ids) == "2015-03-03");
  CHECK(chars.encode_characters("x")[0] == Vocabulary::kUnk);
  ids.push_back(Vocabulary::kEos);
  ids.push_back(chars.id("7"));
  CHECK(chars.decode_characters(ids) == "2015-03-03");  // stops at <eos>
  NDArray padded = pad_sequences({{5, 6, 7}, {8}});
  CHECK(padded.shape() == Shape{2, 3});
  CHECK(padded.to_vector() == std::vector<double>{5, 6, 7, 8, 0, 0});
  CHECK(split_words("Ich habe keinen Platz dafür.") ==
        std::vector<std::string>{"ich", "habe", "keinen", "platz", "dafür", "."});
  Vocabulary words;
  words.add("hallo");
  CHECK(words.decode_words(words.encode_words({"hallo", "welt"})) ==
        std::vector<std::string>{"hallo", "<unk>"});
  CHECK_THAT(error_message([&] { chars.token(99); }),
             Contains("vocabulary: id 99 is not in 0..14"));
}
