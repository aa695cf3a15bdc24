// vision/multilabel_metrics.h by hand: average precision, F1, exact match.
#include <cmath>

#include "attend.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::vision;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("average precision and the classification report by hand", "[vision]") {
  // Ranked: pos, neg, pos, neg -> precisions at the positives 1/1 and 2/3.
  CHECK_THAT(average_precision({0.9, 0.8, 0.7, 0.6}, {true, false, true, false}),
             WithinAbs(5.0 / 6, 1e-15));
  CHECK(average_precision({0.1, 0.9, 0.5}, {false, true, true}) == 1.0);
  CHECK(average_precision({0.1, 0.9}, {false, false}) == 0.0);
  // Equal scores keep their order: the negative listed first ranks first.
  CHECK_THAT(average_precision({0.5, 0.5}, {false, true}), WithinAbs(0.5, 1e-15));
  CHECK_THAT(error_message([] {
               average_precision({0.5}, {true, false});
             }),
             Contains("1 scores but 2 labels"));

  // 3 canvases, 2 classes. Class 0: TP 1, FP 1, FN 1 -> F1 = 2/(2+1+1) = 0.5.
  NDArray logits = f64({2, -1, 1, 3, -2, -4}, {3, 2});
  NDArray labels = f64({1, 0, 0, 1, 1, 0}, {3, 2});
  ClassificationReport r = evaluate_classifier(logits, labels);
  CHECK(r.support == std::vector<Index>{2, 1});
  CHECK(r.f1[0] == 0.5);
  CHECK(r.f1[1] == 1.0);
  CHECK_THAT(r.average_precision[0], WithinAbs(0.5 * (1.0 + 2.0 / 3), 1e-15));  // scores 2, 1, -2
  CHECK(r.average_precision[1] == 1.0);
  // Only canvas 0 is entirely right: canvas 1 adds class 0, canvas 2 misses it.
  CHECK_THAT(r.exact_match, WithinAbs(1.0 / 3, 1e-15));
  CHECK_THAT(r.mean_average_precision, WithinAbs((5.0 / 6 + 1) / 2, 1e-15));
  CHECK(r.loss > 0);
  CHECK_THAT(error_message([&] {
               evaluate_classifier(logits, f64({1, 0}, {1, 2}));
             }),
             Contains("must both be [N, classes]"));
}

TEST_CASE("evaluate_classifier: classes without support are left out of the means", "[vision]") {
  // Class 1 is on no canvas: its AP and F1 are 0 and the means are class 0's alone.
  NDArray logits = f64({3, 1, -2, 1}, {2, 2});
  NDArray labels = f64({1, 0, 0, 0}, {2, 2});
  ClassificationReport r = evaluate_classifier(logits, labels);
  CHECK(r.support == std::vector<Index>{1, 0});
  CHECK(r.average_precision[1] == 0);
  CHECK(r.mean_average_precision == 1.0);
  CHECK(r.macro_f1 == 1.0);
  CHECK(r.exact_match == 0.0);  // both canvases say "present" for class 1
  // The loss is the mean binary cross-entropy over all 4 answers.
  double expected = 0;
  for (double s : {-3.0, 1.0, -2.0, 1.0}) expected += std::log1p(std::exp(s));
  CHECK_THAT(r.loss, WithinAbs(expected / 4, 1e-12));
}
