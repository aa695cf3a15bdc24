// (e) Where does the classifier see the class? Two answers.
//
// CAM (Zhou et al. 2016). The class score is s_c = sum_k w_k^c F_k + b_c with F_k the mean
// of feature map f_k. Swap the sum over k and the mean over the grid:
//     s_c - b_c = mean over (x, y) of M_c(x, y),   M_c(x, y) = sum_k w_k^c f_k(x, y).
// M_c says how much each grid cell adds to the score of class c: the class activation map.
// It exists only because the head is "average, then linear".
//
// Grad-CAM (Selvaraju et al. 2017) needs only gradients, so it works for any head and any
// layer: weigh each feature map A^k by the average gradient of the class score y^c (the
// logit, before the sigmoid or softmax) with respect to it, then keep the positive part:
//     alpha_k^c = (1/Z) sum_{i,j} dy^c / dA^k_ij        (Z = h * w cells)   eq. (1)
//     L^c       = ReLU(sum_k alpha_k^c A^k)                                 eq. (2)
// On the last grid of this model dy^c/dA^k_ij = w_k^c / Z at every cell, so alpha_k^c =
// w_k^c / Z and L^c = ReLU(M_c) / Z: Grad-CAM is CAM, rescaled, without its negative part.
#include <algorithm>

#include "lessons/08_cnn_cam/lesson.h"

namespace attend::lesson08 {

NDArray class_activation_maps(const NDArray& features, const NDArray& weight,
                              const std::vector<Index>& classes) {
  if (features.ndim() != 4 || weight.ndim() != 2 || weight.size(1) != features.size(1))
    fail(
        "class_activation_maps: features [B, K, h, w] and weight [classes, K] do not fit: {} and "
        "{}",
        features.shape(), weight.shape());
  const Index batch = features.size(0), channels = features.size(1);
  const Index cells = features.size(2) * features.size(3);
  if (static_cast<Index>(classes.size()) != batch)
    fail("class_activation_maps: {} images but {} classes (one per image)", batch, classes.size());
  const std::vector<double> f = features.to_vector(), w = weight.to_vector();
  NDArray maps = NDArray::zeros({batch, features.size(2), features.size(3)}, kFloat64);
  double* m = maps.data<double>();
  for (Index b = 0; b < batch; ++b) {
    const Index c = classes[static_cast<std::size_t>(b)];
    if (c < 0 || c >= weight.size(0))
      fail("class_activation_maps: class {} is outside 0..{}", c, weight.size(0) - 1);
    for (Index k = 0; k < channels; ++k) {
      const double w_kc = w[static_cast<std::size_t>(c * channels + k)];
      const double* f_k = f.data() + (b * channels + k) * cells;
      for (Index xy = 0; xy < cells; ++xy) m[b * cells + xy] += w_kc * f_k[xy];
    }
  }
  return maps;
}

NDArray grad_cam_from_gradients(const NDArray& features, const NDArray& gradients) {
  if (features.ndim() != 4 || features.shape() != gradients.shape())
    fail("grad_cam_from_gradients: features {} and gradients {} must both be [B, K, h, w]",
         features.shape(), gradients.shape());
  const Index batch = features.size(0), channels = features.size(1);
  const Index cells = features.size(2) * features.size(3);
  const std::vector<double> a = features.to_vector(), g = gradients.to_vector();
  NDArray maps = NDArray::zeros({batch, features.size(2), features.size(3)}, kFloat64);
  double* m = maps.data<double>();
  for (Index b = 0; b < batch; ++b) {
    for (Index k = 0; k < channels; ++k) {
      const double* a_k = a.data() + (b * channels + k) * cells;
      const double* g_k = g.data() + (b * channels + k) * cells;
      double alpha = 0;  // eq. (1): the gradient's average over the grid
      for (Index ij = 0; ij < cells; ++ij) alpha += g_k[ij];
      alpha /= static_cast<double>(cells);
      for (Index ij = 0; ij < cells; ++ij) m[b * cells + ij] += alpha * a_k[ij];
    }
    for (Index ij = 0; ij < cells; ++ij)
      m[b * cells + ij] = std::max(m[b * cells + ij], 0.0);  // eq. (2)
  }
  return maps;
}

NDArray counterfactual_grad_cam_from_gradients(const NDArray& features, const NDArray& gradients) {
  // -alpha_k^c is the mean of -dy^c/dA^k: the same formula on the negated gradients.
  return grad_cam_from_gradients(features, -gradients.to(kFloat64));
}

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
  result.maps = grad_cam_from_gradients(result.features, result.gradients);
  return result;
}

NDArray upsample_map(const NDArray& grid, Index size) {
  if (grid.ndim() != 2) fail("upsample_map: expects a grid [h, w], got {}", grid.shape());
  return viz::resize_bilinear(grid.to(kFloat64), size, size);
}

}  // namespace attend::lesson08
