// interpret/alignment.h: alignment accuracy on hand-built attention (hits, misses, outputs cut
// short, ties), the attention matrix of a heatmap, and the invariant check of attention
// weights catching a bad row and a weight on padding.
#include "attend.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using attend::data::DateExample;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

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

}  // namespace

TEST_CASE("alignment accuracy on hand-built attention", "[interpret]") {
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

TEST_CASE("the attention matrix of a heatmap drops the padding columns", "[interpret]") {
  const std::vector<std::vector<double>> weights = {{0.5, 0.5, 0.0}, {0.0, 1.0, 0.0}};
  const NDArray m = attention_matrix(weights, 2);  // the padding column dropped
  CHECK(m.shape() == Shape{2, 2});
  CHECK(m.to_vector() == std::vector<double>{0.5, 0.5, 0.0, 1.0});
  CHECK_THAT(error_message([&] { attention_matrix(weights, 4); }), Contains("fewer than the 4"));
  CHECK_THAT(error_message([] { attention_matrix({}, 2); }), Contains("no recorded"));
}

TEST_CASE("the invariant check itself catches a bad row and a masked weight", "[interpret]") {
  const Tensor mask(NDArray::from_list({1, 1, 0}, {1, 3}));
  const Tensor good(f64({0.25, 0.75, 0.0}, {1, 1, 3}));
  const Tensor leaks(f64({0.25, 0.7, 0.05}, {1, 1, 3}));
  const Tensor short_row(f64({0.25, 0.5, 0.0}, {1, 1, 3}));
  CHECK(check_attention(good, mask).largest_masked_weight == 0.0);
  CHECK(check_attention(good, mask).largest_row_sum_error == 0.0);
  CHECK_THAT(check_attention(leaks, mask).largest_masked_weight, WithinAbs(0.05, 1e-15));
  CHECK_THAT(check_attention(short_row, mask).largest_row_sum_error, WithinAbs(0.25, 1e-15));
  CHECK_THAT(error_message([&] { check_attention(Tensor(), mask); }), Contains("no attention"));
}
