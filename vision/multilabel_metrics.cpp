// Average precision, F1 and exact match of a multi-label classifier (multilabel_metrics.h).
#include "vision/multilabel_metrics.h"

#include <algorithm>
#include <numeric>

#include "autograd/tensor.h"
#include "nn/loss.h"
#include "tensor/error.h"

namespace attend::vision {

double average_precision(const std::vector<double>& scores, const std::vector<bool>& positive) {
  if (scores.size() != positive.size())
    fail("average_precision: {} scores but {} labels", scores.size(), positive.size());
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  // Highest score first; equal scores keep their order (so the result is deterministic).
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  double true_positives = 0, precision_sum = 0;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    if (!positive[order[rank]]) continue;
    ++true_positives;
    precision_sum += true_positives / static_cast<double>(rank + 1);  // precision at this rank
  }
  return true_positives > 0 ? precision_sum / true_positives : 0.0;
}

namespace {

double f1_score(Index true_positives, Index false_positives, Index false_negatives) {
  const Index denominator = 2 * true_positives + false_positives + false_negatives;
  return denominator > 0
             ? 2.0 * static_cast<double>(true_positives) / static_cast<double>(denominator)
             : 0.0;
}

}  // namespace

ClassificationReport evaluate_classifier(const NDArray& logits, const NDArray& labels) {
  if (logits.ndim() != 2 || logits.shape() != labels.shape())
    fail("evaluate_classifier: logits {} and labels {} must both be [N, classes]", logits.shape(),
         labels.shape());
  const Index n = logits.size(0), classes = logits.size(1);
  const std::vector<double> score = logits.to_vector(), truth = labels.to_vector();
  ClassificationReport report;
  {
    NoGradGuard no_graph;
    report.loss = nn::binary_cross_entropy_with_logits(Tensor(logits), Tensor(labels)).item();
  }
  double ap_sum = 0, f1_sum = 0;
  Index classes_with_support = 0;
  for (Index c = 0; c < classes; ++c) {
    std::vector<double> scores;
    std::vector<bool> positive;
    Index tp = 0, fp = 0, fn = 0;
    for (Index i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i * classes + c);
      const bool present = truth[k] > 0.5, predicted = score[k] > 0;
      scores.push_back(score[k]);
      positive.push_back(present);
      tp += present && predicted;
      fp += !present && predicted;
      fn += present && !predicted;
    }
    report.average_precision.push_back(average_precision(scores, positive));
    report.f1.push_back(f1_score(tp, fp, fn));
    report.support.push_back(tp + fn);
    if (tp + fn > 0) {
      ++classes_with_support;
      ap_sum += report.average_precision.back();
      f1_sum += report.f1.back();
    }
  }
  if (classes_with_support > 0) {
    report.mean_average_precision = ap_sum / static_cast<double>(classes_with_support);
    report.macro_f1 = f1_sum / static_cast<double>(classes_with_support);
  }
  Index exact = 0;
  for (Index i = 0; i < n; ++i) {
    bool all_right = true;
    for (Index c = 0; c < classes; ++c) {
      const auto k = static_cast<std::size_t>(i * classes + c);
      all_right = all_right && ((score[k] > 0) == (truth[k] > 0.5));
    }
    exact += all_right;
  }
  report.exact_match = static_cast<double>(exact) / static_cast<double>(n);
  return report;
}

}  // namespace attend::vision
