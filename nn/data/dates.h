// The date-normalisation task of the attention lessons: human-written dates in 14 formats
// ("tuesday, march 3 2015", "3/3/15", "the 3rd of march, 2015", ...) translated to ISO
// 8601 ("2015-03-03").
//
// Because the generator writes the input itself, it knows where every output character
// comes from: the year digits of the output come from the year in the input, the month
// digits from the month (a name or a number), the day digits from the day. That ground
// truth is what lets a lesson score, with a number, whether attention looks at the right
// place (alignment accuracy), instead of only showing a picture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/random.h"

namespace attend::data {

// A half-open range [begin, end) of input characters; empty (begin == end == -1) for an
// output character that has no source, such as the '-' separators.
struct Span {
  int begin = -1, end = -1;
  bool empty() const { return begin < 0; }
  bool contains(int position) const { return position >= begin && position < end; }
};

struct DateExample {
  std::string input;         // "tuesday, march 3 2015"
  std::string output;        // "2015-03-03"
  std::vector<Span> source;  // one per output character: where it comes from
  int format = 0;            // which of the formats wrote the input
  int year = 0, month = 0, day = 0;
};

constexpr int kDateFormats = 14;
constexpr int kFirstYear = 1950, kLastYear = 2049;  // two-digit years are unambiguous here

// An example of the format, e.g. "dd mon yyyy: 03 mar 2015".
std::string date_format_description(int format);
// Writes the date in the format; throws attend::Error for an invalid date or format.
DateExample make_date(int year, int month, int day, int format);
// A uniformly random date in [kFirstYear, kLastYear] in a random format (or the given one).
DateExample random_date(Generator& gen, int format = -1);

struct DateSplits {
  std::vector<DateExample> train, validation, test;
};
// Fixed-seed splits with no (date, format) pair in two splits.
DateSplits make_date_splits(std::size_t train, std::size_t validation, std::size_t test,
                            std::uint64_t seed);

}  // namespace attend::data
