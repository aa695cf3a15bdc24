// The CAM network (cam_classifier.h): encoder, global average pooling, one linear layer.
#include "vision/cam_classifier.h"

#include "autograd/ops.h"  // sum and flatten, for docs/08_cnn_cam.md's exercise 4
#include "nn/pool.h"

namespace attend::vision {

CamClassifier::CamClassifier(const EncoderShape& shape, Index classes, Generator& gen)
    : encoder(shape, gen), classifier(shape.channels3, classes, /*bias=*/true, gen) {
  register_module("encoder", encoder);
  register_module("classifier", classifier);
}

Tensor CamClassifier::forward(const Tensor& images) {
  return classify(encoder(images));
}

// F_k = mean over the grid of f_k (global average pooling), then s_c = sum_k w_k^c F_k + b_c.
// Zhou et al. write F_k as a sum; the mean only divides every w_k^c by the number of cells.
Tensor CamClassifier::classify(const Tensor& features) {
  return classifier(nn::global_avg_pool2d(features));
}

}  // namespace attend::vision
