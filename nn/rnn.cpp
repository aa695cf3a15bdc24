#include "nn/rnn.h"

#include "autograd/ops.h"
#include "tensor/shape_ops.h"

namespace attend::nn::rnn {

void check_sequence(const Tensor& x, Index input_size, DType parameters, std::string_view layer) {
  if (!x.defined()) fail("{}: the input is undefined", layer);
  if (x.ndim() != 3 || x.size(2) != input_size)
    fail("{}: input must be [B, T, {}] (batch first), got {}", layer, input_size, x.shape());
  if (x.size(0) < 1 || x.size(1) < 1)
    fail("{}: input {} needs at least one sequence of at least one step", layer, x.shape());
  if (x.dtype() != parameters)
    fail("{}: input is {} but the parameters are {} (convert one with .to())", layer,
         dtype_name(x.dtype()), dtype_name(parameters));
}

// The backward of T separate slices would cost T^2 steps' worth of work; unbind (see
// autograd/ops_shape.cpp) shares one gradient buffer among the T steps and costs one pass.
std::vector<Tensor> split_time_steps(const Tensor& x) {
  if (x.ndim() < 2 || x.size(1) < 1)
    fail("split_time_steps: needs [B, T, ...] with T >= 1, got {}", x.shape());
  return unbind(x, 1);
}

std::vector<Tensor> step_masks(const Tensor& mask, Index batch, Index steps, DType dtype,
                               std::string_view layer) {
  if (!mask.defined()) return {};
  if (mask.shape() != Shape{batch, steps})
    fail("{}: mask must be [B, T] = [{}, {}] like the input, got {}", layer, batch, steps,
         mask.shape());
  const NDArray values = mask.data().to(kFloat64);
  for (double v : values.span<double>())
    if (v != 0 && v != 1)
      fail("{}: mask must hold only 0 (padding) and 1 (real token), found {}", layer, v);
  const NDArray m = values.to(dtype);
  std::vector<Tensor> columns;
  columns.reserve(static_cast<std::size_t>(steps));
  for (Index t = 0; t < steps; ++t) columns.push_back(Tensor(slice(m, 1, t, t + 1)));  // [B, 1]
  return columns;
}

Tensor initial_state(const Tensor& states, Index direction, Index directions, Index batch,
                     Index hidden, DType dtype, std::string_view layer, std::string_view what) {
  if (!states.defined()) return zeros({batch, hidden}, dtype);
  if (states.shape() != Shape{directions, batch, hidden})
    fail("{}: {} must be [D, B, H] = [{}, {}, {}], got {}", layer, what, directions, batch, hidden,
         states.shape());
  if (states.dtype() != dtype)
    fail("{}: {} is {} but the input is {}", layer, what, dtype_name(states.dtype()),
         dtype_name(dtype));
  if (directions == 1) return squeeze(states, 0);
  return squeeze(slice(states, 0, direction, direction + 1), 0);
}

Tensor join_outputs(const std::vector<Tensor>& per_direction, const Tensor& mask) {
  Tensor out = per_direction.size() == 1 ? per_direction[0] : concat(per_direction, -1);
  if (!mask.defined()) return out;
  // [B, T] -> [B, T, 1], broadcast over the features: 0 at padded steps.
  const NDArray m = mask.data().to(out.dtype());
  return out * Tensor(m.reshape({m.size(0), m.size(1), 1}));
}

}  // namespace attend::nn::rnn
