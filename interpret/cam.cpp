// CAM and Grad-CAM from arrays: see cam.h for the equations.
#include "interpret/cam.h"

#include <algorithm>

#include "nn/viz/image.h"
#include "tensor/elementwise.h"
#include "tensor/error.h"

namespace attend::interpret {

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

NDArray upsample_map(const NDArray& grid, Index size) {
  if (grid.ndim() != 2) fail("upsample_map: expects a grid [h, w], got {}", grid.shape());
  return viz::resize_bilinear(grid.to(kFloat64), size, size);
}

}  // namespace attend::interpret
