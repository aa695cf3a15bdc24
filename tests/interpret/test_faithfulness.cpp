// interpret/faithfulness.h: deletion and insertion curves on a toy "model" whose score is the
// sum of the kept patches' relevance, where both curves are known in closed form.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// The toy model: its score is the sum of the true importance of the kept patches.
KeepMaskScore sum_of_kept(std::vector<double> importance) {
  return [importance](const std::vector<bool>& kept) {
    double s = 0;
    for (std::size_t i = 0; i < kept.size(); ++i)
      if (kept[i]) s += importance[i];
    return s;
  };
}

void check_values(const std::vector<double>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    CHECK_THAT(actual[i], WithinAbs(expected[i], 1e-12));
}

}  // namespace

TEST_CASE("deletion and insertion by hand: the score is the sum of the kept relevance",
          "[interpret]") {
  // Importance (1, 4, 2, 3) and the map equal to it: the order is patches 1, 3, 2, 0.
  // Deletion in 4 steps removes 4, then 3, then 2, then 1: scores 10, 6, 3, 1, 0 at
  // fractions 0, 1/4, 1/2, 3/4, 1; AUC = 1/4 ((10+6)/2 + (6+3)/2 + (3+1)/2 + (1+0)/2) = 15/4.
  // Insertion adds them in the same order: 0, 4, 7, 9, 10; AUC = 1/4 (2 + 5.5 + 8 + 9.5) = 25/4.
  const std::vector<double> importance = {1, 4, 2, 3};
  KeepMaskScore score = sum_of_kept(importance);
  CHECK(relevance_order(importance) == std::vector<Index>{1, 3, 2, 0});
  PerturbationCurve deletion = deletion_curve(importance, score, 4);
  check_values(deletion.fraction, {0, 0.25, 0.5, 0.75, 1});
  check_values(deletion.score, {10, 6, 3, 1, 0});
  CHECK_THAT(deletion.auc, WithinAbs(15.0 / 4, 1e-12));
  PerturbationCurve insertion = insertion_curve(importance, score, 4);
  check_values(insertion.score, {0, 4, 7, 9, 10});
  CHECK_THAT(insertion.auc, WithinAbs(25.0 / 4, 1e-12));
  // At every fraction deletion's kept set and insertion's are complements, so the two areas
  // add up to the whole score: 15/4 + 25/4 = 10.
  // A map in the reverse order (the least relevant first) is the worst: deletion then scores
  // 10, 9, 7, 4, 0 (AUC 1/4 (9.5 + 8 + 5.5 + 2) = 25/4), the perfect map's insertion area.
  const std::vector<double> reversed = {4, 1, 3, 2};
  CHECK_THAT(deletion_curve(reversed, score, 4).auc, WithinAbs(25.0 / 4, 1e-12));
}

TEST_CASE("deletion in fewer steps than patches: n_s = floor(s N / k)", "[interpret]") {
  // N = 5 patches of importance 5, 4, 3, 2, 1 (total 15), k = 2 steps: n = 0, 2, 5 removed,
  // fractions 0, 2/5, 1, scores 15, 6, 0; AUC = 2/5 (15 + 6) / 2 + 3/5 (6 + 0) / 2 = 6.
  const std::vector<double> importance = {5, 4, 3, 2, 1};
  PerturbationCurve deletion = deletion_curve(importance, sum_of_kept(importance), 2);
  check_values(deletion.fraction, {0, 0.4, 1});
  check_values(deletion.score, {15, 6, 0});
  CHECK_THAT(deletion.auc, WithinAbs(6, 1e-12));
  // Ties keep the index order: a constant map removes patches left to right.
  CHECK(relevance_order(std::vector<double>{2, 2, 3, 2}) == std::vector<Index>{2, 0, 1, 3});
}

TEST_CASE("deletion and insertion: errors", "[interpret]") {
  const std::vector<double> map = {1, 2, 3};
  KeepMaskScore score = sum_of_kept(map);
  CHECK_THAT(error_message([&] { deletion_curve(map, score, 4); }),
             Contains("deletion_curve: steps must be in 1..3 (the number of patches), got 4"));
  CHECK_THAT(error_message([&] { insertion_curve(map, score, 0); }),
             Contains("insertion_curve: steps must be in 1..3"));
  CHECK_THAT(error_message([&] { deletion_curve(std::vector<double>{}, score, 1); }),
             Contains("deletion_curve: the map has no patches"));
  CHECK_THAT(error_message([&] { deletion_curve(map, KeepMaskScore{}, 1); }),
             Contains("no score function"));
  const std::vector<double> nan_map = {1, std::nan(""), 3};
  CHECK_THAT(error_message([&] { deletion_curve(nan_map, score, 1); }),
             Contains("relevance nan of patch 1 is not a finite number"));
  CHECK_THAT(error_message([] {
               trapezoid_area(std::vector<double>{0, 1}, std::vector<double>{1});
             }),
             Contains("trapezoid_area: 2 x values but 1 y values"));
}
