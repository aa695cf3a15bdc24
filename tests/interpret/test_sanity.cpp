// interpret/sanity.h: Spearman rank correlation with average ranks for ties, against values
// computed by hand.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("average ranks: ties share the mean of the ranks they span", "[interpret]") {
  CHECK(average_ranks(std::vector<double>{7, 5, 9, 7}) == std::vector<double>{2.5, 1, 4, 2.5});
  CHECK(average_ranks(std::vector<double>{1, 1, 1}) == std::vector<double>{2, 2, 2});
  CHECK(average_ranks(std::vector<double>{3, -1, 2}) == std::vector<double>{3, 1, 2});
}

TEST_CASE("Spearman by hand, without and with ties", "[interpret]") {
  // No ties: ranks (1, 2, 3, 4) and (2, 1, 4, 3), d = (-1, 1, -1, 1), sum d^2 = 4:
  // rho = 1 - 6 * 4 / (4 * 15) = 3/5.
  CHECK_THAT(
      spearman_correlation(std::vector<double>{1, 2, 3, 4}, std::vector<double>{20, 10, 40, 30}),
      WithinAbs(0.6, 1e-12));
  // Ties: a = (1, 2, 2, 3) -> ranks (1, 2.5, 2.5, 4); b = (1, 3, 2, 4) -> ranks (1, 3, 2, 4).
  // Centred (mean 2.5): a' = (-1.5, 0, 0, 1.5), b' = (-1.5, 0.5, -0.5, 1.5).
  // sum a'b' = 2.25 + 2.25 = 4.5, sum a'^2 = 4.5, sum b'^2 = 5: rho = 4.5 / sqrt(22.5) = 0.9487.
  // (The tie-free formula 1 - 6 sum d^2 / (n (n^2 - 1)) would give 1 - 6 * 0.5 / 60 = 0.95.)
  CHECK_THAT(spearman_correlation(std::vector<double>{1, 2, 2, 3}, std::vector<double>{1, 3, 2, 4}),
             WithinAbs(4.5 / std::sqrt(22.5), 1e-12));
  // Only the order counts: any increasing transform gives 1, a decreasing one -1.
  const std::vector<double> a = {0.1, 5, -2, 3};
  std::vector<double> cubed, negated;
  for (double v : a) cubed.push_back(v * v * v), negated.push_back(-v);
  CHECK_THAT(spearman_correlation(a, cubed), WithinAbs(1, 1e-12));
  CHECK_THAT(spearman_correlation(a, negated), WithinAbs(-1, 1e-12));
  // absolute: |a| and |-a| are the same map.
  CHECK_THAT(spearman_correlation(a, negated, /*absolute=*/true), WithinAbs(1, 1e-12));
}

TEST_CASE("Spearman: a constant map gives 0; sizes must match", "[interpret]") {
  CHECK(spearman_correlation(std::vector<double>{0, 0, 0}, std::vector<double>{1, 2, 3}) == 0);
  CHECK_THAT(error_message([] {
               spearman_correlation(std::vector<double>{1, 2}, std::vector<double>{1, 2, 3});
             }),
             Contains("spearman_correlation: maps of 2 and 3 values"));
  CHECK_THAT(
      error_message([] { spearman_correlation(std::vector<double>{1}, std::vector<double>{1}); }),
      Contains("at least 2"));
  CHECK_THAT(error_message([] {
               average_ranks(std::vector<double>{1, std::nan("")});
             }),
             Contains("average_ranks: value 1 is NaN"));
}
