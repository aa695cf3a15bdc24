// The additive score op (nn/additive_score.h): forward and backward kernels side by side.
// With h = tanh(qp + kp) ([B, Tq, Tk, A], kept for the backward) and g = dL/dscores:
//
//   scores = sum over a of v_a h            (the forward)
//   dpre   = g v (1 - h^2)                  (tanh' = 1 - tanh^2; dpre = dL/d(qp + kp))
//   dqp    = sum over Tk of dpre,   dkp = sum over Tq of dpre
//   dv     = sum over B, Tq, Tk of g h
//
// Each number is the composed graph's (squeeze(to_score(tanh(q + k)))), bit for bit, because
// each sum is taken in the order its composed op takes it:
//   h       vector_math::tanh(qp + kp): tensor/elementwise.cpp's expression, same flags
//   scores  the Linear's GEMM [N, A] x [1, A]^T, N = B Tq Tk rows (tensor/gemm.cpp): when gemm
//           takes its small loops for that shape (and always in float64), gemm itself on h;
//           otherwise its kernel's order, per K block of 256 one FMA chain from 0 in
//           increasing a, the blocks added in order
//   dh      the Linear's input gradient, a GEMM [N, 1] x [1, A] with k = 1: fma(g, v, 0)
//   dpre    tanh's backward, dh (1 - h h) (autograd/ops_elementwise.cpp)
//   dqp     the broadcast add's sum_to over Tk: 0 + dpre_0 + dpre_1 + ..., dpre alone if Tk = 1
//   dkp     the same over Tq (tensor/reduce.cpp)
//   dv      the weight gradient [1, N] x [N, A] (gemm's small loops): one FMA chain from 0
//           over the N rows in order
#include "nn/additive_score.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "autograd/saved_array.h"
#include "tensor/gemm.h"
#include "tensor/parallel.h"
#include "tensor/vector_math.h"

namespace attend::nn {
// The unity build (ATTEND_UNITY_BUILD) compiles this file together with its neighbours, whose
// anonymous namespaces then merge with this one: the names below get their own namespace.
namespace {
namespace additive {

constexpr std::string_view kOp = "additive_score";

struct Sizes {
  Index batch = 0, tq = 0, tk = 0, a = 0;
  Index rows() const { return batch * tq * tk; }  // rows of h, one per (batch, query, key)
};

// From kParallelElements tanh (or multiply-adds) on, the rows are shared out to the threads
// (for_each_item_range, tensor/parallel.h), as elementwise loops are: below it, waking the pool's
// sleeping threads cost more than it saved (REF-BAHDANAU's 64 x 25 x 64 scores took longer with
// two threads at a threshold of 2^15). Each output number is computed inside one chunk, so the
// bits do not depend on the number of threads.

// ---- forward -------------------------------------------------------------------------------

// h[j, :] = tanh(q + kp[j, :]) for the tk keys of one (batch, query) row: the sums first,
// then tanh over the whole tk x a block in one loop (long enough to keep the divisions of
// many vectors in flight; rows of a = 64 are only four vectors).
template <class T>
void hidden_row(const T* q, const T* k, Index tk, Index a, T* h) {
  for (Index j = 0; j < tk; ++j) {
    const T* kj = k + j * a;
    T* hj = h + j * a;
#pragma omp simd
    for (Index c = 0; c < a; ++c) hj[c] = q[c] + kj[c];
  }
  const Index n = tk * a;
#pragma omp simd
  for (Index x = 0; x < n; ++x) h[x] = vector_math::tanh(h[x]);
}

// acc + x y as the GEMM computes it (tensor/gemm_kernel.cpp writes its fused multiply-adds
// out; gemm.cpp's loops are compiled to them).
using vector_math::multiply_add;

constexpr int kChains = 8;

// out[r] = h[r, :] . v for R rows in the GEMM kernel's order: per K block, one FMA chain
// from 0 in increasing a, the blocks added to out in order. R rows are R independent chains.
template <int R, class T>
void score_chains(const T* h, Index a, const T* v, T* out) {
  const Index block = gemm_k_block();
  for (Index k0 = 0; k0 < a; k0 += block) {
    const Index k1 = std::min(a, k0 + block);
    T acc[R] = {};
    for (Index c = k0; c < k1; ++c)
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r] = multiply_add(h[r * a + c], v[c], acc[r]);
    for (int r = 0; r < R; ++r) out[r] = k0 == 0 ? acc[r] : out[r] + acc[r];
  }
}

template <class T>
void score_rows(const T* h, Index rows, Index a, const T* v, T* out) {
  Index r = 0;
  for (; r + kChains <= rows; r += kChains) score_chains<kChains>(h + r * a, a, v, out + r);
  for (; r < rows; ++r) score_chains<1>(h + r * a, a, v, out + r);
}

// scores = h v^T, h = tanh(qp + kp).
template <class T>
void forward(const Sizes& s, const T* qp, const T* kp, const T* v, T* h, T* scores) {
  const Index a = s.a, tk = s.tk;
  const GemmShape product{.m = s.rows(), .n = 1, .k = a, .transpose_b = true};
  const bool by_gemm = std::is_same_v<T, double> || gemm_uses_small_loops(product);
  for_each_item_range(s.batch * s.tq, s.batch * s.tq * tk * a, 1, [&](Index begin, Index end) {
    for (Index row = begin; row < end; ++row) {  // row = b * tq + i
      T* hr = h + row * tk * a;
      hidden_row(qp + row * a, kp + row / s.tq * tk * a, tk, a, hr);
      if (!by_gemm) score_rows(hr, tk, a, v, scores + row * tk);
    }
  });
  if (by_gemm) gemm(product, h, a, v, a, scores, 1);
}

// ---- backward ------------------------------------------------------------------------------

// dpre = dh (1 - h^2) with dh = g v as the GEMM with k = 1 computes it (one FMA from 0), for
// one row of h. Stored, and read back by the sums in their own loops, so that the compiler
// cannot fuse this product into their additions: the composed graph rounds it first. With
// dv given, also this row's term of dv's chain (see weight_gradient).
template <class T>
void tanh_backward(T g, const T* v, const T* h, Index a, T* dpre, T* dv) {
  if (!dv) {
#pragma omp simd
    for (Index c = 0; c < a; ++c) dpre[c] = multiply_add(g, v[c], T(0)) * (1 - h[c] * h[c]);
    return;
  }
#pragma omp simd
  for (Index c = 0; c < a; ++c) {
    dpre[c] = multiply_add(g, v[c], T(0)) * (1 - h[c] * h[c]);
    dv[c] = multiply_add(g, h[c], dv[c]);
  }
}

// Term `index` of a sum over n terms into out, as sum_to adds them: 0 + x_0 + x_1 + ..., or
// x_0 itself when n = 1 (sum_to returns the gradient unchanged; 0 + x differs for x = -0).
template <class T>
void sum_term(const T* x, Index a, Index index, Index n, T* out) {
  if (n == 1) {
    std::copy_n(x, a, out);
  } else if (index == 0) {
#pragma omp simd
    for (Index c = 0; c < a; ++c) out[c] = T(0) + x[c];
  } else {
#pragma omp simd
    for (Index c = 0; c < a; ++c) out[c] += x[c];
  }
}

// dqp and dkp of batch entry b (either may be null: not wanted), and dv's terms of its rows
// when dv is given. With one query (a decoder step) dkp is dpre itself, written in place.
template <class T>
void input_gradients(const Sizes& s, Index b, const T* g, const T* h, const T* v, T* dqp, T* dkp,
                     T* dpre, T* dv) {
  const Index a = s.a;
  const bool in_place = dkp && s.tq == 1;
  for (Index i = 0; i < s.tq; ++i) {
    const Index row = b * s.tq + i;
    for (Index j = 0; j < s.tk; ++j) {
      const Index n = row * s.tk + j;
      T* d = in_place ? dkp + (b * s.tk + j) * a : dpre;
      tanh_backward(g[n], v, h + n * a, a, d, dv);
      if (dqp) sum_term(d, a, j, s.tk, dqp + row * a);
      if (dkp && !in_place) sum_term(d, a, i, s.tq, dkp + (b * s.tk + j) * a);
    }
  }
}

// dv[c] = sum over the rows n of g[n] h[n, c], for columns c0..c1: the weight gradient
// [1, N] x [N, A], which gemm computes with its small loops as one FMA chain from 0 over n
// (float64: the same loop).
template <class T>
void weight_gradient(const Sizes& s, const T* g, const T* h, Index c0, Index c1, T* dv) {
  std::fill(dv + c0, dv + c1, T(0));
  const Index a = s.a;
  for (Index n = 0; n < s.rows(); ++n) {
    const T gn = g[n];
    const T* hn = h + n * a;
#pragma omp simd
    for (Index c = c0; c < c1; ++c) dv[c] = multiply_add(gn, hn[c], dv[c]);
  }
}

// One pass over h when one thread does it all (dv's chain then meets the rows in order);
// with threads, the batch entries are shared out and dv's columns in a second pass.
template <class T>
void backward(const Sizes& s, const T* g, const T* h, const T* v, T* dqp, T* dkp, T* dv) {
  const bool inputs = dqp || dkp, one_pass = inputs && dv && s.rows() * s.a < kParallelElements;
  if (one_pass) std::fill(dv, dv + s.a, T(0));
  if (inputs)
    for_each_item_range(s.batch, s.batch * s.tq * s.tk * s.a, 1, [&](Index begin, Index end) {
      std::vector<T> dpre(static_cast<std::size_t>(s.a));
      for (Index b = begin; b < end; ++b)
        input_gradients(s, b, g, h, v, dqp, dkp, dpre.data(), one_pass ? dv : nullptr);
    });
  if (dv && !one_pass)
    for_each_item_range(s.a, s.a * s.rows(), 16,
                        [&](Index begin, Index end) { weight_gradient(s, g, h, begin, end, dv); });
}

Sizes check_inputs(const Tensor& qp, const Tensor& kp, const Tensor& v) {
  if (!qp.defined() || !kp.defined() || qp.ndim() != 3 || kp.ndim() != 3)
    fail("{}: needs qp [B, Tq, A] and kp [B, Tk, A], got qp {} and kp {}", kOp,
         shape_or_undefined(qp), shape_or_undefined(kp));
  if (qp.size(0) != kp.size(0) || qp.size(2) != kp.size(2))
    fail("{}: qp {} and kp {} must share the batch B and the width A ([B, Tq, A], [B, Tk, A])", kOp,
         qp.shape(), kp.shape());
  if (!v.defined() || v.ndim() != 2 || v.size(0) != 1 || v.size(1) != qp.size(2))
    fail("{}: v must be [1, A] = [1,{}] (a Linear A -> 1's weight), got {} (qp {}, kp {})", kOp,
         qp.size(2), shape_or_undefined(v), qp.shape(), kp.shape());
  if (qp.dtype() != kp.dtype() || qp.dtype() != v.dtype())
    fail("{}: qp {} is {}, kp {} is {}, v {} is {}: they need one dtype", kOp, qp.shape(),
         dtype_name(qp.dtype()), kp.shape(), dtype_name(kp.dtype()), v.shape(),
         dtype_name(v.dtype()));
  return {qp.size(0), qp.size(1), kp.size(1), qp.size(2)};
}

}  // namespace additive
}  // namespace

Tensor additive_score(const Tensor& qp, const Tensor& kp, const Tensor& v) {
  const additive::Sizes s = additive::check_inputs(qp, kp, v);
  const DType dtype = qp.dtype();
  NDArray h = NDArray::empty({s.batch, s.tq, s.tk, s.a}, dtype);
  NDArray scores = NDArray::empty({s.batch, s.tq, s.tk}, dtype);
  const NDArray qv = qp.data(), kv = kp.data(), vv = v.data();
  dispatch_float(dtype, additive::kOp, [&]<class T>() {
    additive::forward<T>(s, qv.data<T>(), kv.data<T>(), vv.data<T>(), h.data<T>(),
                         scores.data<T>());
  });
  const bool dq = qp.requires_grad(), dk = kp.requires_grad(), dw = v.requires_grad();
  const Shape q_shape = qv.shape(), k_shape = kv.shape();
  auto backward_fn = [=, vs = SavedArray(vv, "input #2")](const NDArray& g) -> Grads {
    // Every number is written (its first term assigns it) unless its sum has no terms.
    NDArray gq = !dq        ? NDArray()
                 : s.tk > 0 ? NDArray::empty(q_shape, dtype)
                            : NDArray::zeros(q_shape, dtype);
    NDArray gk = !dk        ? NDArray()
                 : s.tq > 0 ? NDArray::empty(k_shape, dtype)
                            : NDArray::zeros(k_shape, dtype);
    NDArray gv = dw ? NDArray::empty(vs.shape(), dtype) : NDArray();
    dispatch_float(dtype, additive::kOp, [&]<class T>() {
      additive::backward<T>(s, g.data<T>(), h.data<T>(), vs.get().data<T>(),
                            dq ? gq.data<T>() : nullptr, dk ? gk.data<T>() : nullptr,
                            dw ? gv.data<T>() : nullptr);
    });
    return {gq, gk, gv};
  };
  return make_op("additive_score", scores, {qp, kp, v}, backward_fn);
}

}  // namespace attend::nn
