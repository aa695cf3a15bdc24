// Lesson 13, part 2: the functions the dates sections measure with, on cases worked by hand:
// the replacements of a cross-attention row (Dates 4) and their distances, and the scores of
// a set of maps against the source spans. The library's methods are tested in
// tests/interpret/ and the weights hook in tests/nn/transformer/.
#include "lessons/13_reading_attention/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::lesson13;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// Two dates, one head, one step, four source positions; date 0 has three real characters.
NDArray two_rows() {
  return f64({0.5, 0.3, 0.2, 0, 0.1, 0.2, 0.3, 0.4}, {2, 1, 1, 4});
}
NDArray two_masks() {
  return f64({1, 1, 1, 0, 1, 1, 1, 1}, {2, 4});
}

std::vector<double> row(const NDArray& w, Index b) {
  return matrix_rows(w.reshape({w.size(0), w.size(3)})).at(static_cast<std::size_t>(b));
}

}  // namespace

TEST_CASE("lesson13: a permuted row keeps its weights, on the real characters only", "[lesson13]") {
  Generator gen(3);
  Movement moved;
  const NDArray out = replace_rows(two_rows(), two_masks(), Replacement::kPermuted, gen, moved);
  std::vector<double> first = row(out, 0);
  CHECK(first[3] == 0.0);  // the padding stays at 0
  std::sort(first.begin(), first.begin() + 3);
  CHECK_THAT(first[0], WithinAbs(0.2, 1e-7));
  CHECK_THAT(first[1], WithinAbs(0.3, 1e-7));
  CHECK_THAT(first[2], WithinAbs(0.5, 1e-7));
  CHECK(moved.rows == 2);
}

TEST_CASE("lesson13: uniform and another date's rows, and how far they moved", "[lesson13]") {
  Generator gen(4);
  Movement uniform_moved;
  const NDArray uniform =
      replace_rows(two_rows(), two_masks(), Replacement::kUniform, gen, uniform_moved);
  const std::vector<double> third(3, 1.0 / 3), quarter(4, 0.25);
  for (std::size_t j = 0; j < 3; ++j) CHECK_THAT(row(uniform, 0)[j], WithinAbs(third[j], 1e-7));
  CHECK(row(uniform, 0)[3] == 0.0);
  for (std::size_t j = 0; j < 4; ++j) CHECK_THAT(row(uniform, 1)[j], WithinAbs(quarter[j], 1e-7));
  // TVD of date 0: (|0.5 - 1/3| + |0.3 - 1/3| + |0.2 - 1/3|) / 2 = 1/6; of date 1:
  // (0.15 + 0.05 + 0.05 + 0.15) / 2 = 0.2.
  CHECK_THAT(uniform_moved.tvd, WithinAbs(1.0 / 6 + 0.2, 1e-6));

  // Another date's: date 1's row cut to date 0's characters, [0.1 0.2 0.3] / 0.6; date 0's
  // row (the next date, cyclically) for date 1, where date 0 has no fourth character.
  Movement other_moved;
  const NDArray other =
      replace_rows(two_rows(), two_masks(), Replacement::kOtherDate, gen, other_moved);
  const std::vector<double> expected0{1.0 / 6, 1.0 / 3, 0.5, 0}, expected1{0.5, 0.3, 0.2, 0};
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK_THAT(row(other, 0)[j], WithinAbs(expected0[j], 1e-7));
    CHECK_THAT(row(other, 1)[j], WithinAbs(expected1[j], 1e-7));
  }
}

TEST_CASE("lesson13: total variation and Jensen-Shannon distances by hand", "[lesson13]") {
  Movement m;
  m.add({1, 0}, {0, 1});  // disjoint: TVD 1, JSD ln 2
  CHECK_THAT(m.tvd, WithinAbs(1.0, 1e-12));
  CHECK_THAT(m.jsd, WithinAbs(std::log(2.0), 1e-12));
  m.add({0.5, 0.5}, {0.5, 0.5});  // the same row: 0 and 0
  CHECK_THAT(m.tvd, WithinAbs(1.0, 1e-12));
  CHECK(m.rows == 2);
  CHECK_THAT(error_message([] {
               Generator gen(0);
               Movement moved;
               replace_rows(two_rows(), NDArray::ones({2, 3}), Replacement::kUniform, gen, moved);
             }),
             Contains("replace_rows") && Contains("[2,3]"));
}

TEST_CASE("lesson13: a map's alignment and its mass inside the span", "[lesson13]") {
  // One date, output "1-2": digit 0 comes from input positions 0..1, digit 2 from 3..4.
  data::DateExample date;
  date.source = {{0, 2}, {}, {3, 5}};
  // Digit 0: largest entry at 1 (inside), mass 0.6 inside; digit 2: largest at 0 (outside),
  // mass 0.3 inside. The '-' row is not scored.
  const MapSet maps{{{0.2, 0.4, 0.1, 0.2, 0.1}, {1, 0, 0, 0, 0}, {0.5, 0.2, 0, 0.2, 0.1}}};
  const MapScore s = score_maps({date}, maps);
  CHECK_THAT(s.alignment, WithinAbs(0.5, 1e-12));
  CHECK_THAT(s.mass, WithinAbs((0.6 + 0.3) / 2, 1e-12));
  // A digit the model did not write counts as a miss with no mass.
  const MapScore short_map = score_maps({date}, {{{0.2, 0.4, 0.1, 0.2, 0.1}}});
  CHECK_THAT(short_map.alignment, WithinAbs(0.5, 1e-12));
  CHECK_THAT(short_map.mass, WithinAbs(0.3, 1e-12));
}
