#include "nn/data/dates.h"

#include <fmt/format.h>

#include <array>
#include <set>
#include <tuple>

#include "tensor/error.h"

namespace attend::data {
namespace {

constexpr std::array<const char*, 12> kMonths = {"january",   "february", "march",    "april",
                                                 "may",       "june",     "july",     "august",
                                                 "september", "october",  "november", "december"};
constexpr std::array<const char*, 7> kWeekdays = {"sunday",   "monday", "tuesday", "wednesday",
                                                  "thursday", "friday", "saturday"};

bool is_leap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int days_in_month(int y, int m) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Sakamoto's method: 0 = Sunday.
int weekday(int y, int m, int d) {
  constexpr int kOffset[] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
  if (m < 3) y -= 1;
  return (y + y / 4 - y / 100 + y / 400 + kOffset[m - 1] + d) % 7;
}

std::string ordinal(int d) {
  const char* suffix = (d % 100 >= 11 && d % 100 <= 13) ? "th"
                       : d % 10 == 1                    ? "st"
                       : d % 10 == 2                    ? "nd"
                       : d % 10 == 3                    ? "rd"
                                                        : "th";
  return fmt::format("{}{}", d, suffix);
}

enum class Role { kText, kYear, kMonth, kDay };

// Builds the input piece by piece, remembering where the year, month and day went.
class Writer {
 public:
  Writer& text(const std::string& s) { return put(s, Role::kText); }
  Writer& year(const std::string& s) { return put(s, Role::kYear); }
  Writer& month(const std::string& s) { return put(s, Role::kMonth); }
  Writer& day(const std::string& s) { return put(s, Role::kDay); }

  const std::string& input() const { return input_; }
  Span span(Role role) const {
    if (role == Role::kYear) return year_;
    if (role == Role::kMonth) return month_;
    return day_;
  }

 private:
  Writer& put(const std::string& s, Role role) {
    Span span{static_cast<int>(input_.size()), static_cast<int>(input_.size() + s.size())};
    if (role == Role::kYear) year_ = span;
    if (role == Role::kMonth) month_ = span;
    if (role == Role::kDay) day_ = span;
    input_ += s;
    return *this;
  }
  std::string input_;
  Span year_, month_, day_;
};

}  // namespace

std::string date_format_description(int format) {
  static const std::array<const char*, kDateFormats> kDescriptions = {
      "weekday, month d yyyy: tuesday, march 3 2015",
      "m/d/yy: 3/3/15",
      "dd mon yyyy: 03 mar 2015",
      "month dth, yyyy: march 3rd, 2015",
      "d month yyyy: 3 march 2015",
      "mon d, yyyy: mar 3, 2015",
      "dd.mm.yyyy: 03.03.2015",
      "the dth of month, yyyy: the 3rd of march, 2015",
      "d-mon-yy: 3-mar-15",
      "wkd d mon yyyy: tue 3 mar 2015",
      "yyyymmdd: 20150303",
      "yyyy/mm/dd: 2015/03/03",
      "dth month yyyy: 3rd march 2015",
      "mm/dd/yyyy: 03/03/2015"};
  if (format < 0 || format >= kDateFormats)
    fail("dates: format {} is not one of 0..{}", format, kDateFormats - 1);
  return kDescriptions[format];
}

DateExample make_date(int y, int m, int d, int format) {
  if (y < kFirstYear || y > kLastYear)
    fail("dates: year {} is outside {}..{}", y, kFirstYear, kLastYear);
  if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
    fail("dates: {}-{}-{} is not a valid date", y, m, d);
  if (format < 0 || format >= kDateFormats)
    fail("dates: format {} is not one of 0..{}", format, kDateFormats - 1);
  const std::string month = kMonths[m - 1], mon = month.substr(0, 3);
  const std::string wday = kWeekdays[weekday(y, m, d)], wkd = wday.substr(0, 3);
  const std::string yyyy = fmt::format("{}", y), yy = fmt::format("{:02}", y % 100);
  const std::string mm = fmt::format("{:02}", m), dd = fmt::format("{:02}", d);
  const std::string mn = fmt::format("{}", m), dn = fmt::format("{}", d);

  Writer w;
  switch (format) {
    case 0:
      w.text(wday + ", ").month(month).text(" ").day(dn).text(" ").year(yyyy);
      break;
    case 1:
      w.month(mn).text("/").day(dn).text("/").year(yy);
      break;
    case 2:
      w.day(dd).text(" ").month(mon).text(" ").year(yyyy);
      break;
    case 3:
      w.month(month).text(" ").day(ordinal(d)).text(", ").year(yyyy);
      break;
    case 4:
      w.day(dn).text(" ").month(month).text(" ").year(yyyy);
      break;
    case 5:
      w.month(mon).text(" ").day(dn).text(", ").year(yyyy);
      break;
    case 6:
      w.day(dd).text(".").month(mm).text(".").year(yyyy);
      break;
    case 7:
      w.text("the ").day(ordinal(d)).text(" of ").month(month).text(", ").year(yyyy);
      break;
    case 8:
      w.day(dn).text("-").month(mon).text("-").year(yy);
      break;
    case 9:
      w.text(wkd + " ").day(dn).text(" ").month(mon).text(" ").year(yyyy);
      break;
    case 10:
      w.year(yyyy).month(mm).day(dd);
      break;
    case 11:
      w.year(yyyy).text("/").month(mm).text("/").day(dd);
      break;
    case 12:
      w.day(ordinal(d)).text(" ").month(month).text(" ").year(yyyy);
      break;
    case 13:
      w.month(mm).text("/").day(dd).text("/").year(yyyy);
      break;
  }

  DateExample e;
  e.input = w.input();
  e.output = fmt::format("{}-{}-{}", yyyy, mm, dd);
  e.format = format;
  e.year = y;
  e.month = m;
  e.day = d;
  // "yyyy-mm-dd": characters 0-3 from the year, 5-6 from the month, 8-9 from the day.
  for (int i = 0; i < 10; ++i) {
    if (i < 4)
      e.source.push_back(w.span(Role::kYear));
    else if (i == 5 || i == 6)
      e.source.push_back(w.span(Role::kMonth));
    else if (i >= 8)
      e.source.push_back(w.span(Role::kDay));
    else
      e.source.push_back(Span{});
  }
  return e;
}

DateExample random_date(Generator& gen, int format) {
  const int y = kFirstYear + static_cast<int>(gen.randint(kLastYear - kFirstYear + 1));
  const int m = 1 + static_cast<int>(gen.randint(12));
  const int d = 1 + static_cast<int>(gen.randint(days_in_month(y, m)));
  const int f = format >= 0 ? format : static_cast<int>(gen.randint(kDateFormats));
  return make_date(y, m, d, f);
}

DateSplits make_date_splits(std::size_t train, std::size_t validation, std::size_t test,
                            std::uint64_t seed) {
  const std::size_t wanted = train + validation + test;
  const std::size_t available =
      static_cast<std::size_t>(kLastYear - kFirstYear + 1) * 365 * kDateFormats;
  if (wanted > available / 2)
    fail("dates: {} examples asked for, but only about {} distinct (date, format) pairs exist",
         wanted, available);
  Generator gen(seed);
  std::set<std::tuple<int, int, int, int>> seen;
  DateSplits splits;
  while (seen.size() < wanted) {
    DateExample e = random_date(gen);
    if (!seen.insert({e.year, e.month, e.day, e.format}).second) continue;
    if (splits.train.size() < train)
      splits.train.push_back(std::move(e));
    else if (splits.validation.size() < validation)
      splits.validation.push_back(std::move(e));
    else
      splits.test.push_back(std::move(e));
  }
  return splits;
}

}  // namespace attend::data
