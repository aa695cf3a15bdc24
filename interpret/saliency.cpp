// Gradient and input x gradient saliency: see saliency.h for the equations.
#include "interpret/saliency.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "tensor/error.h"

namespace attend::interpret {
namespace {

// Reduces `values` (laid out as `shape`) over `axis` with `reduce(so_far, value)`, starting
// from 0: the shape without that axis, float64.
template <class Reduce>
NDArray reduce_channels(const std::vector<double>& values, const Shape& shape, int axis,
                        std::string_view op, Reduce reduce) {
  const int ndim = shape.ndim();
  if (ndim < 2 || axis < -ndim || axis >= ndim)
    fail("{}: channel axis {} does not fit an array of shape {} (at least 2 axes)", op, axis,
         shape);
  if (axis < 0) axis += ndim;
  Index outer = 1, inner = 1;
  for (int d = 0; d < ndim; ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  Shape kept = shape;
  kept.erase(axis);
  const Index channels = shape[axis];
  NDArray map = NDArray::zeros(kept, kFloat64);
  double* m = map.data<double>();
  for (Index o = 0; o < outer; ++o)
    for (Index c = 0; c < channels; ++c)
      for (Index i = 0; i < inner; ++i)
        m[o * inner + i] = reduce(m[o * inner + i], values[(o * channels + c) * inner + i]);
  return map;
}

}  // namespace

NDArray gradient_saliency(const NDArray& gradients, int channel_axis) {
  // max_c |g|, from 0 (every |g| >= 0).
  return reduce_channels(gradients.to_vector(), gradients.shape(), channel_axis,
                         "gradient_saliency",
                         [](double m, double g) { return std::max(m, std::abs(g)); });
}

NDArray input_x_gradient(const NDArray& inputs, const NDArray& gradients, int channel_axis) {
  if (inputs.shape() != gradients.shape())
    fail("input_x_gradient: inputs {} and gradients {} must have the same shape", inputs.shape(),
         gradients.shape());
  std::vector<double> product = inputs.to_vector();
  const std::vector<double> g = gradients.to_vector();
  for (std::size_t k = 0; k < product.size(); ++k) product[k] *= g[k];
  return reduce_channels(product, inputs.shape(), channel_axis, "input_x_gradient",
                         [](double m, double xg) { return m + xg; });
}

}  // namespace attend::interpret
