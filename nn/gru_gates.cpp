// The GRU step's gates (nn/gru_gates.h): forward and backward kernels side by side.
//
//   r = sigmoid(a_r), a_r = gi_r + gh_r       dL/da_r = dL/dr r (1 - r)
//   z = sigmoid(a_z), a_z = gi_z + gh_z       dL/da_z = dL/dz z (1 - z)
//   n = tanh(a_n),    a_n = gi_n + r gh_n     dL/da_n = dL/dn (1 - n^2)
//   h' = (1 - z) n + z h                      dL/dn = g (1 - z), dL/dz = g h - g n, dL/dh = g z
//
// and dL/dr = dL/da_n gh_n, dL/dgh_n = dL/da_n r. dL/dgi = [da_r | da_z | da_n] and
// dL/dgh = [da_r | da_z | dL/dgh_n], with g = dL/dh'.
//
// Same bits as the composed graph (nn/gru.cpp before this op), because every number is rounded
// where a composed op rounded it:
//   - each composed op was its own loop, so a product never met an addition inside one
//     expression. The compiler fuses a * b + c into one multiply-add (rounding once) whenever
//     both are in one loop body, so products that the composed graph then added (r gh_n before
//     gi_n +, the two terms of h', the two terms of dL/dz) are stored in one loop and added in
//     the next (the compiler does not merge loops).
//   - sigmoid, tanh and their derivatives are the same expressions as tensor/elementwise.cpp's
//     and autograd/ops_elementwise.cpp's (g y (1 - y), g (1 - y y)), contracted the same way.
//   - dL/dz was the sum of two contributions (from z h and from 1 - z): two terms commute.
//   - the composed gates were slices of gi and gh, whose gradients were zero arrays with the
//     slice written in, summed: each number came out as x + 0 (which turns -0 into +0), so the
//     gradients here get + 0 too, in a loop of their own.
#include "nn/gru_gates.h"

#include <algorithm>
#include <vector>

#include "autograd/saved_array.h"
#include "tensor/parallel.h"
#include "tensor/vector_math.h"

namespace attend::nn {
// The unity build (ATTEND_UNITY_BUILD) compiles this file together with its neighbours, whose
// anonymous namespaces then merge with this one: the names below get their own namespace.
namespace {
namespace gru {

constexpr std::string_view kOp = "gru_gates";

// ---- forward -------------------------------------------------------------------------------

// One row: gates = [r | z | n] (kept for the backward), out = h'. scratch holds H numbers.
template <class T>
void forward_row(const T* gi, const T* gh, const T* h, Index H, T* gates, T* out, T* scratch) {
  T *r = gates, *z = gates + H, *n = gates + 2 * H;
  // r, z, and the product r gh_n (stored: the next loop adds it to gi_n)
#pragma omp simd
  for (Index j = 0; j < H; ++j) {
    r[j] = vector_math::sigmoid(gi[j] + gh[j]);
    z[j] = vector_math::sigmoid(gi[H + j] + gh[H + j]);
    n[j] = r[j] * gh[2 * H + j];
  }
  // n, and the two terms of h' (stored: the next loop adds them)
#pragma omp simd
  for (Index j = 0; j < H; ++j) {
    n[j] = vector_math::tanh(gi[2 * H + j] + n[j]);
    scratch[j] = (1 - z[j]) * n[j];
    out[j] = z[j] * h[j];
  }
#pragma omp simd
  for (Index j = 0; j < H; ++j) out[j] = scratch[j] + out[j];
}

template <class T>
void forward(Index B, Index H, const T* gi, const T* gh, const T* h, T* gates, T* out) {
  for_each_item_range(B, B * 3 * H, 1, [&](Index begin, Index end) {  // rows on their own
    std::vector<T> scratch(static_cast<std::size_t>(H));
    for (Index b = begin; b < end; ++b)
      forward_row(gi + b * 3 * H, gh + b * 3 * H, h + b * H, H, gates + b * 3 * H, out + b * H,
                  scratch.data());
  });
}

// ---- backward ------------------------------------------------------------------------------

// One row. dgi and dgh [3H] (either may be null: not wanted), dh [H] (may be null); scratch
// holds 5H numbers.
template <class T>
void backward_row(const T* g, const T* gates, const T* gh, const T* h, Index H, T* dgi, T* dgh,
                  T* dh, T* scratch) {
  const T *r = gates, *z = gates + H, *n = gates + 2 * H;
  T *dz_from_zh = scratch, *dz_from_one_minus_z = scratch + H;
  // [da_r | da_z | dL/dgh_n] go to dgh's place, or to scratch if dgh is not wanted.
  T* d = dgh ? dgh : scratch + 2 * H;
#pragma omp simd
  for (Index j = 0; j < H; ++j) {
    if (dh) dh[j] = g[j] * z[j];
    dz_from_zh[j] = g[j] * h[j];
    dz_from_one_minus_z[j] = -(g[j] * n[j]);
    const T dan = g[j] * (1 - z[j]) * (1 - n[j] * n[j]);  // dL/da_n: tanh' of dL/dn
    const T dr = dan * gh[2 * H + j];
    d[2 * H + j] = dan * r[j];  // dL/dgh_n
    if (dgi) dgi[2 * H + j] = dan;
    d[j] = dr * r[j] * (1 - r[j]);  // dL/da_r
  }
#pragma omp simd
  for (Index j = 0; j < H; ++j) {
    const T dz = dz_from_zh[j] + dz_from_one_minus_z[j];
    d[H + j] = dz * z[j] * (1 - z[j]);  // dL/da_z
  }
  if (dgi) std::copy_n(d, 2 * H, dgi);
  // + 0, as the composed slices' zero arrays added it
  if (dgi)
#pragma omp simd
    for (Index j = 0; j < 3 * H; ++j) dgi[j] += T(0);
  if (dgh)
#pragma omp simd
    for (Index j = 0; j < 3 * H; ++j) dgh[j] += T(0);
}

template <class T>
void backward(Index B, Index H, const T* g, const T* gates, const T* gh, const T* h, T* dgi, T* dgh,
              T* dh) {
  for_each_item_range(B, B * 3 * H, 1, [&](Index begin, Index end) {  // rows on their own
    std::vector<T> scratch(static_cast<std::size_t>(5 * H));
    for (Index b = begin; b < end; ++b)
      backward_row(g + b * H, gates + b * 3 * H, gh + b * 3 * H, h + b * H, H,
                   dgi ? dgi + b * 3 * H : nullptr, dgh ? dgh + b * 3 * H : nullptr,
                   dh ? dh + b * H : nullptr, scratch.data());
  });
}

void check_inputs(const Tensor& gi, const Tensor& gh, const Tensor& h) {
  if (!gi.defined() || !gh.defined() || !h.defined() || h.ndim() != 2 ||
      gi.shape() != Shape{h.size(0), 3 * h.size(1)} || gh.shape() != gi.shape())
    fail("{}: needs gi [B, 3H], gh [B, 3H] and h [B, H], got gi {}, gh {} and h {}", kOp,
         shape_or_undefined(gi), shape_or_undefined(gh), shape_or_undefined(h));
  if (gi.dtype() != gh.dtype() || gi.dtype() != h.dtype())
    fail("{}: gi {} is {}, gh {} is {}, h {} is {}: they need one dtype", kOp, gi.shape(),
         dtype_name(gi.dtype()), gh.shape(), dtype_name(gh.dtype()), h.shape(),
         dtype_name(h.dtype()));
}

}  // namespace gru
}  // namespace

Tensor gru_gates(const Tensor& gi, const Tensor& gh, const Tensor& h) {
  gru::check_inputs(gi, gh, h);
  const Index B = h.size(0), H = h.size(1);
  const DType dtype = h.dtype();
  NDArray gates = NDArray::empty({B, 3 * H}, dtype);  // [r | z | n]
  NDArray out = NDArray::empty({B, H}, dtype);
  const NDArray giv = gi.data(), ghv = gh.data(), hv = h.data();
  dispatch_float(dtype, gru::kOp, [&]<class T>() {
    gru::forward<T>(B, H, giv.data<T>(), ghv.data<T>(), hv.data<T>(), gates.data<T>(),
                    out.data<T>());
  });
  const bool dgi = gi.requires_grad(), dgh = gh.requires_grad(), dh = h.requires_grad();
  auto backward_fn = [=, ghs = SavedArray(ghv, "input #1"),
                      hs = SavedArray(hv, "input #2")](const NDArray& g) -> Grads {
    NDArray gi_grad = dgi ? NDArray::empty({B, 3 * H}, dtype) : NDArray();
    NDArray gh_grad = dgh ? NDArray::empty({B, 3 * H}, dtype) : NDArray();
    NDArray h_grad = dh ? NDArray::empty({B, H}, dtype) : NDArray();
    dispatch_float(dtype, gru::kOp, [&]<class T>() {
      gru::backward<T>(B, H, g.data<T>(), gates.data<T>(), ghs.get().data<T>(), hs.get().data<T>(),
                       dgi ? gi_grad.data<T>() : nullptr, dgh ? gh_grad.data<T>() : nullptr,
                       dh ? h_grad.data<T>() : nullptr);
    });
    return {gi_grad, gh_grad, h_grad};
  };
  return make_op("gru_gates", out, {gi, gh, h}, backward_fn);
}

}  // namespace attend::nn
