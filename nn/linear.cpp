#include "nn/linear.h"

#include "autograd/saved_array.h"
#include "nn/init.h"
#include "tensor/elementwise.h"
#include "tensor/matmul.h"
#include "tensor/reduce.h"

namespace attend::nn {

namespace {

// y[i, :] += b for every row i of y [rows, out], in place in matmul's new array: the same
// sums as y + b, without a second array and a broadcasting pass.
void add_bias_rows(NDArray& y, const NDArray& b) {
  dispatch_float(y.dtype(), "linear", [&]<class T>() {
    T* row = y.data<T>();
    const T* bias = b.data<T>();
    const Index out = b.numel();
    for (Index i = 0; i < y.numel(); i += out) {
#pragma omp simd
      for (Index j = 0; j < out; ++j) row[i + j] += bias[j];
    }
  });
}

}  // namespace

// y = x W^T + b        x [.., in], W [out, in], b [out], y [.., out]
// dL/dx = g W          [.., out] @ [out, in]
// dL/dW = g^T x        [out, N] @ [N, in], N = all leading positions stacked
// dL/db = sum of g over the leading positions
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (weight.ndim() != 2) fail("linear: weight must be [out, in], got {}", weight.shape());
  if (x.ndim() < 1 || x.size(-1) != weight.size(1))
    fail("linear: input {} does not end in in_features {} of weight {}", x.shape(), weight.size(1),
         weight.shape());
  if (bias.defined() && bias.shape() != Shape{weight.size(0)})
    fail("linear: bias {} does not match weight {} (expected [{}])", bias.shape(), weight.shape(),
         weight.size(0));
  if (x.dtype() != weight.dtype())
    fail("linear: input {} is {} but weight {} is {} (convert one with .to())", x.shape(),
         dtype_name(x.dtype()), weight.shape(), dtype_name(weight.dtype()));
  NDArray xv = x.data(), w = weight.data();
  const Index in = w.size(1), out = w.size(0);
  // A 1-D input is a single row.
  NDArray x2 = xv.reshape({-1, in});
  NDArray y = matmul(x2, w, false, true);
  if (bias.defined() && bias.dtype() == y.dtype())
    add_bias_rows(y, bias.data());
  else if (bias.defined())
    y = y + bias.data();  // another dtype: operator+'s rules
  Shape out_shape = xv.shape();
  out_shape[out_shape.ndim() - 1] = out;
  y = y.reshape(out_shape);

  const bool dx = x.requires_grad(), dw = weight.requires_grad();
  const bool has_bias = bias.defined(), db = has_bias && bias.requires_grad();
  const Shape x_shape = xv.shape();
  auto backward = [=, ws = SavedArray(w, "input #1"),
                   xs = SavedArray(x2, "input #0")](const NDArray& g) -> Grads {
    NDArray g2 = g.reshape({-1, out});
    NDArray gx, gw, gb;
    auto grad_x = [&] { gx = matmul(g2, ws).reshape(x_shape); };
    auto grad_w_and_b = [&] {
      if (dw) gw = matmul(g2, xs, true, false);
      if (db) gb = sum(g2, 0);
    };
    if (dx && dw) {
      run_two_products(g.numel() * in, grad_x, grad_w_and_b);  // each N out in multiply-adds
    } else {
      if (dx) grad_x();
      grad_w_and_b();
    }
    if (has_bias) return {gx, gw, gb};
    return {gx, gw};
  };
  if (has_bias) return make_op("linear", y, {x, weight, bias}, backward);
  return make_op("linear", y, {x, weight}, backward);
}

Linear::Linear(Index in_features, Index out_features, bool with_bias, Generator& gen) {
  const double bound = init::fan_in_bound(in_features);
  weight = init::uniform({out_features, in_features}, bound, gen);
  register_parameter("weight", weight);
  if (with_bias) {
    bias = init::uniform({out_features}, bound, gen);
    register_parameter("bias", bias);
  }
}

std::string Linear::describe() const {
  return fmt::format("Linear({} -> {}{})", weight.size(1), weight.size(0),
                     bias.defined() ? "" : ", no bias");
}

}  // namespace attend::nn
