#include "nn/layer_norm.h"

#include <cmath>

#include "autograd/saved_array.h"

namespace attend::nn {

// Per row of D values (the last axis):
//   mu = mean(x), rstd = 1 / sqrt(mean((x - mu)^2) + eps), xhat = (x - mu) * rstd
//   y = xhat * gamma + beta
// Backward, with g = dL/dy and gx = g * gamma:
//   dL/dgamma = sum over rows of g * xhat,   dL/dbeta = sum over rows of g
//   dL/dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat))
// (the two means come from mu and rstd depending on every x of the row).
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const Index d = x.ndim() > 0 ? x.size(-1) : 0;
  if (gamma.shape() != Shape{d} || beta.shape() != Shape{d})
    fail("layer_norm: input {} needs gamma and beta of shape [{}], got {} and {}", x.shape(), d,
         gamma.shape(), beta.shape());
  const NDArray xv = x.data(), gv = gamma.data(), bv = beta.data();
  check_same_dtype(xv, gv, "layer_norm");
  check_same_dtype(xv, bv, "layer_norm");
  const Index rows = x.numel() / d;
  NDArray y = NDArray::empty(xv.shape(), xv.dtype());
  NDArray xhat = NDArray::empty(xv.shape(), xv.dtype());
  NDArray rstd = NDArray::empty({rows}, xv.dtype());
  dispatch_float(xv.dtype(), "layer_norm", [&]<class T>() {
    const T *px = xv.data<T>(), *pg = gv.data<T>(), *pb = bv.data<T>();
    T *py = y.data<T>(), *ph = xhat.data<T>(), *pr = rstd.data<T>();
    for (Index r = 0; r < rows; ++r) {
      const T* xr = px + r * d;
      T mean = 0, var = 0;
      for (Index i = 0; i < d; ++i) mean += xr[i];
      mean /= static_cast<T>(d);
      for (Index i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
      var /= static_cast<T>(d);
      const T s = T(1) / std::sqrt(var + static_cast<T>(eps));
      pr[r] = s;
      for (Index i = 0; i < d; ++i) {
        ph[r * d + i] = (xr[i] - mean) * s;
        py[r * d + i] = ph[r * d + i] * pg[i] + pb[i];
      }
    }
  });

  // xhat and rstd are the op's own arrays; gamma is a parameter that must not change
  // between the forward and the backward (an optimizer step in between).
  return make_op("layer_norm", y, {x, gamma, beta},
                 [=, gs = SavedArray(gv, "gamma")](const NDArray& g) -> Grads {
                   NDArray dx = NDArray::empty(xhat.shape(), g.dtype());
                   NDArray dgamma = NDArray::zeros({d}, g.dtype()),
                           dbeta = NDArray::zeros({d}, g.dtype());
                   dispatch_float(g.dtype(), "layer_norm", [&]<class T>() {
                     const T *pg = g.data<T>(), *ph = xhat.data<T>(), *pr = rstd.data<T>(),
                             *gam = gs.get().data<T>();
                     T *pdx = dx.data<T>(), *pdg = dgamma.data<T>(), *pdb = dbeta.data<T>();
                     for (Index r = 0; r < rows; ++r) {
                       const T* gr = pg + r * d;
                       const T* hr = ph + r * d;
                       T mean_gx = 0, mean_gx_xhat = 0;
                       for (Index i = 0; i < d; ++i) {
                         const T gx = gr[i] * gam[i];
                         mean_gx += gx;
                         mean_gx_xhat += gx * hr[i];
                         pdg[i] += gr[i] * hr[i];
                         pdb[i] += gr[i];
                       }
                       mean_gx /= static_cast<T>(d);
                       mean_gx_xhat /= static_cast<T>(d);
                       for (Index i = 0; i < d; ++i)
                         pdx[r * d + i] = pr[r] * (gr[i] * gam[i] - mean_gx - hr[i] * mean_gx_xhat);
                     }
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
