#include "nn/layer_norm.h"

#include <cmath>

#include "autograd/saved_array.h"
#include "tensor/parallel.h"
#include "tensor/vector_math.h"

namespace attend::nn {

// Per row of D values (the last axis):
//   mu = mean(x), rstd = 1 / sqrt(mean((x - mu)^2) + eps), xhat = (x - mu) * rstd
//   y = xhat * gamma + beta
// Backward, with g = dL/dy and gx = g * gamma:
//   dL/dgamma = sum over rows of g * xhat,   dL/dbeta = sum over rows of g
//   dL/dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat))
// (the two means come from mu and rstd depending on every x of the row).
//
// Each row's sums are one chain of additions in increasing i, and each addition waits for the
// one before (about 4 cycles): one row at a time, the chains were most of the op's time. So
// rows are taken kRows at a time with their chains side by side; every row's numbers are still
// the same sums in the same order. This file is compiled with -ffp-contract=off
// (nn/CMakeLists.txt) and writes each fused multiply-add out (multiply_add), so that the
// rounding cannot depend on how the compiler arranges the loops: the same bits for a row
// alone or in a group, and the same as the one-row loops this replaced.
// The unity build (ATTEND_UNITY_BUILD) compiles this file together with its neighbours, whose
// anonymous namespaces then merge with this one: the names below get their own namespace.
namespace {
namespace norm {

constexpr Index kRows = 8;

// a b + c rounded once where the processor has fused multiply-adds, else twice (what the
// compiler made of the same expressions before).
using vector_math::multiply_add;

// Rows x[k * d + i] for k < R: xhat, y and rstd.
template <int R, class T>
void forward_rows(const T* x, Index d, T eps, const T* gamma, const T* beta, T* xhat, T* y,
                  T* rstd) {
  T mean[R] = {}, var[R] = {};
  for (Index i = 0; i < d; ++i)
#pragma GCC unroll 8
    for (int k = 0; k < R; ++k) mean[k] += x[k * d + i];
  for (int k = 0; k < R; ++k) mean[k] /= static_cast<T>(d);
  for (Index i = 0; i < d; ++i)
#pragma GCC unroll 8
    for (int k = 0; k < R; ++k) {
      const T centred = x[k * d + i] - mean[k];
      var[k] += centred * centred;
    }
  for (int k = 0; k < R; ++k) {
    rstd[k] = T(1) / std::sqrt(var[k] / static_cast<T>(d) + eps);
#pragma omp simd
    for (Index i = 0; i < d; ++i) {
      const Index at = k * d + i;
      xhat[at] = (x[at] - mean[k]) * rstd[k];
      y[at] = multiply_add(xhat[at], gamma[i], beta[i]);
    }
  }
}

template <class T>
void forward(Index rows, Index d, T eps, const T* x, const T* gamma, const T* beta, T* xhat, T* y,
             T* rstd) {
  const Index groups = (rows + kRows - 1) / kRows;
  const auto body = [&](Index begin, Index end) {
    for (Index group = begin; group < end; ++group) {
      const Index r = group * kRows, at = r * d;
      if (r + kRows <= rows)
        forward_rows<kRows>(x + at, d, eps, gamma, beta, xhat + at, y + at, rstd + r);
      else
        for (Index one = r; one < rows; ++one)
          forward_rows<1>(x + one * d, d, eps, gamma, beta, xhat + one * d, y + one * d,
                          rstd + one);
    }
  };
  for_each_item_range(groups, rows * d, 1, body);
}

// dL/dx of rows k < R.
template <int R, class T>
void input_gradient_rows(const T* g, const T* xhat, const T* rstd, Index d, const T* gamma, T* dx) {
  T mean_gx[R] = {}, mean_gx_xhat[R] = {};
  for (Index i = 0; i < d; ++i)
#pragma GCC unroll 8
    for (int k = 0; k < R; ++k) {
      const T gx = g[k * d + i] * gamma[i];
      mean_gx[k] += gx;
      mean_gx_xhat[k] = multiply_add(gx, xhat[k * d + i], mean_gx_xhat[k]);
    }
  for (int k = 0; k < R; ++k) {
    const T m = mean_gx[k] / static_cast<T>(d), mh = mean_gx_xhat[k] / static_cast<T>(d);
#pragma omp simd
    for (Index i = 0; i < d; ++i) {
      const Index at = k * d + i;
      const T gx_minus_m = multiply_add(g[at], gamma[i], -m);  // g gamma - mean(gx)
      dx[at] = rstd[k] * multiply_add(-xhat[at], mh, gx_minus_m);
    }
  }
}

template <class T>
void backward(Index rows, Index d, const T* g, const T* xhat, const T* rstd, const T* gamma, T* dx,
              T* dgamma, T* dbeta) {
  const Index groups = (rows + kRows - 1) / kRows;
  const auto body = [&](Index begin, Index end) {
    for (Index group = begin; group < end; ++group) {
      const Index r = group * kRows, at = r * d;
      if (r + kRows <= rows)
        input_gradient_rows<kRows>(g + at, xhat + at, rstd + r, d, gamma, dx + at);
      else
        for (Index one = r; one < rows; ++one)
          input_gradient_rows<1>(g + one * d, xhat + one * d, rstd + one, d, gamma, dx + one * d);
    }
  };
  for_each_item_range(groups, rows * d, 1, body);
  // dgamma and dbeta: one chain per column over the rows in order, the columns side by side.
  for (Index r = 0; r < rows; ++r)
#pragma omp simd
    for (Index i = 0; i < d; ++i) {
      dgamma[i] = multiply_add(g[r * d + i], xhat[r * d + i], dgamma[i]);
      dbeta[i] += g[r * d + i];
    }
}

}  // namespace norm
}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const Index d = x.ndim() > 0 ? x.size(-1) : 0;
  if (gamma.shape() != Shape{d} || beta.shape() != Shape{d})
    fail("layer_norm: input {} needs gamma and beta of shape [{}], got {} and {}", x.shape(), d,
         gamma.shape(), beta.shape());
  const NDArray xv = x.data(), gv = gamma.data(), bv = beta.data();
  check_same_dtype(xv, gv, "layer_norm");
  check_same_dtype(xv, bv, "layer_norm");
  const Index rows = d > 0 ? x.numel() / d : 0;
  NDArray y = NDArray::empty(xv.shape(), xv.dtype());
  NDArray xhat = NDArray::empty(xv.shape(), xv.dtype());
  NDArray rstd = NDArray::empty({rows}, xv.dtype());
  dispatch_float(xv.dtype(), "layer_norm", [&]<class T>() {
    norm::forward<T>(rows, d, static_cast<T>(eps), xv.data<T>(), gv.data<T>(), bv.data<T>(),
                     xhat.data<T>(), y.data<T>(), rstd.data<T>());
  });

  // xhat and rstd are the op's own arrays; gamma is a parameter that must not change
  // between the forward and the backward (an optimizer step in between).
  return make_op(
      "layer_norm", y, {x, gamma, beta},
      [=, gs = SavedArray(gv, "gamma")](const NDArray& g) -> Grads {
        NDArray dx = NDArray::empty(xhat.shape(), g.dtype());
        NDArray dgamma = NDArray::zeros({d}, g.dtype()), dbeta = NDArray::zeros({d}, g.dtype());
        dispatch_float(g.dtype(), "layer_norm", [&]<class T>() {
          norm::backward<T>(rows, d, g.data<T>(), xhat.data<T>(), rstd.data<T>(),
                            gs.get().data<T>(), dx.data<T>(), dgamma.data<T>(), dbeta.data<T>());
        });
        return {dx, dgamma, dbeta};
      });
}

LayerNorm::LayerNorm(Index dim, double epsilon) : eps(epsilon) {
  weight = Tensor(NDArray::ones({dim}));
  bias = Tensor(NDArray::zeros({dim}));
  register_parameter("weight", weight);
  register_parameter("bias", bias);
}

std::string LayerNorm::describe() const {
  return fmt::format("LayerNorm({}, eps={:g})", weight.size(0), eps);
}

}  // namespace attend::nn
