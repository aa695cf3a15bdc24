// Grad-CAM of CamClassifier (grad_cam.h): one backward from the chosen block's output.
#include "vision/grad_cam.h"

#include <cstdint>

#include "autograd/ops.h"
#include "autograd/tensor.h"
#include "interpret/cam.h"
#include "tensor/error.h"
#include "tensor/index_ops.h"

namespace attend::vision {

GradCam grad_cam(CamClassifier& model, const NDArray& images, const std::vector<Index>& classes,
                 int block) {
  if (block < 1 || block > CanvasEncoder::kBlocks)
    fail("grad_cam: block must be 1..{}, got {}", CanvasEncoder::kBlocks, block);
  if (static_cast<Index>(classes.size()) != images.size(0))
    fail("grad_cam: {} images but {} classes (one per image)", images.size(0), classes.size());
  GradCam result;
  {
    NoGradGuard no_graph;  // nothing before A needs a gradient
    result.features = model.encoder.forward_blocks(Tensor(images), 0, block).data();
  }
  Tensor features(result.features, /*requires_grad=*/true);  // A, a leaf of its own graph
  Tensor logits =
      model.classify(model.encoder.forward_blocks(features, block, CanvasEncoder::kBlocks));
  // y = sum over images b of logit[b, c_b]. Image b's logit depends only on image b's
  // features, so dy/dA_b = d logit[b, c_b] / dA_b: one backward gives every image's gradient.
  std::vector<std::int64_t> ids(classes.begin(), classes.end());
  NDArray chosen =
      one_hot(NDArray::from_vector(ids, {images.size(0)}), model.classes(), logits.dtype());
  Tensor score = sum(logits * Tensor(chosen));
  score.backward();
  result.gradients = features.grad().data();
  model.zero_grad();  // the backward also filled the parameters' gradients: not wanted here
  result.maps = interpret::grad_cam_from_gradients(result.features, result.gradients);
  return result;
}

}  // namespace attend::vision
