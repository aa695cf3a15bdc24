// (e) Grad-CAM of the lesson's classifier: the gradient of each image's class logit with
// respect to the output of an encoder block, turned into a map by
// interpret::grad_cam_from_gradients (interpret/cam.h has the equations, and CAM).
//
// On the last grid of this model dy^c/dA^k_ij = w_k^c / Z at every cell, so alpha_k^c =
// w_k^c / Z and L^c = ReLU(M_c) / Z: Grad-CAM is CAM, rescaled, without its negative part.
#include "lesson.h"

namespace attend::lesson08 {

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

}  // namespace attend::lesson08
