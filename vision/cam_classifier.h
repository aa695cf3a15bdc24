// The CAM network of Zhou et al. (2016), lesson 08's classifier: CanvasEncoder, global
// average pooling, one linear layer. An images -> logits module (nn::UnaryModule), so that
// the training loop and the metrics of multilabel_training.h and multilabel_metrics.h take it
// as they take any other classifier of images.
#pragma once

#include <string>

#include "nn/linear.h"
#include "nn/module.h"
#include "vision/canvas_encoder.h"

namespace attend::vision {

//   F_k = mean over (x, y) of f_k(x, y),   s_c = sum_k w_k^c F_k + b_c   (one logit per class)
// Without the pooling-then-linear head there would be no CAM: the map is this same sum taken
// before the pooling (interpret/cam.h).
class CamClassifier : public nn::UnaryModule {
 public:
  CamClassifier(const EncoderShape& shape, Index classes, Generator& gen = default_generator());
  // images [B, 3, S, S] -> logits [B, classes] (before the sigmoid).
  Tensor forward(const Tensor& images) override;
  // The head alone: features [B, K, h, w] -> logits [B, classes].
  Tensor classify(const Tensor& features);
  Index classes() const { return classifier.weight.size(0); }
  std::string describe() const override { return "CamClassifier"; }

  CanvasEncoder encoder;
  nn::Linear classifier;  // weight [classes, K]: w_k^c is weight[c, k]
};

}  // namespace attend::vision
