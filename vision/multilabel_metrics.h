// How well a multi-label classifier says which classes are on a held-out canvas (lesson 08,
// section 4), from its logits alone: any model's (multilabel_training.h's predict_logits).
//
// Accuracy over all canvas x class decisions would look good for a model that always says
// "absent" (about 80% of the answers are "absent" on the canvases), so the report has, per
// class:
//   average precision   how well the scores rank the canvases that contain the class above
//                       those that do not (no threshold needed); its mean over the classes
//                       is the mAP of PASCAL VOC and COCO classification
//   F1                  2 TP / (2 TP + FP + FN) when "present" means logit > 0 (a sigmoid
//                       probability above 1/2)
// and, over whole canvases, the share whose label set is exactly right.
#pragma once

#include <vector>

#include "tensor/ndarray.h"

namespace attend::vision {

// Average precision of one class: rank the canvases by score, and average the precision
// (the share of true positives among the canvases ranked so far) at each true positive.
// 1 for a perfect ranking; about the positives' share for a random one. 0 if no positives.
// Equal scores keep their order.
double average_precision(const std::vector<double>& scores, const std::vector<bool>& positive);

struct ClassificationReport {
  std::vector<double> average_precision;  // per class
  std::vector<double> f1;                 // per class, deciding "present" at logit > 0
  std::vector<Index> support;             // canvases containing the class
  double mean_average_precision = 0;      // mean over the classes with support
  double macro_f1 = 0;                    // mean over the classes with support
  double exact_match = 0;                 // canvases whose whole label set is right
  double loss = 0;                        // mean binary cross-entropy
};

// logits [N, classes] (before the sigmoid) against multi-hot labels [N, classes].
ClassificationReport evaluate_classifier(const NDArray& logits, const NDArray& labels);

}  // namespace attend::vision
