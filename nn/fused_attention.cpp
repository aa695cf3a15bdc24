// The fused attention op: forward and backward kernels side by side, one (batch, head) pair
// at a time. For one head, with S = Q K^T * scale (causal entries j > i left out),
// P = softmax(S) row by row, O = P V, and dO = dL/dO:
//
//   dV = P^T dO
//   dP = dO V^T
//   dS = P * (dP - rowsum(P * dP))        (the softmax's backward, row by row)
//   dQ = dS K * scale,   dK = dS^T Q * scale
//
// The forward keeps P ([B, H, Tq, Tk], zeros where masked) for the backward.
#include "nn/fused_attention.h"

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "autograd/saved_array.h"
#include "tensor/parallel.h"
#include "tensor/vector_math.h"

namespace attend::nn {
namespace {

constexpr std::string_view kOp = "fused_attention";

// Where q, k or v sits: columns offset.. of input `input`, whose rows hold `width` numbers.
struct Operand {
  int input = 0;
  Index offset = 0, width = 0;
};

struct Geometry {
  Index batch = 0, tq = 0, tk = 0, heads = 0, d = 0, dv = 0;
  bool causal = false;
  double scale = 1;
  Operand q, k, v;
};

// Row t of batch entry b, head h, of an operand whose head size is `head`.
template <class P>
P* row(P* base, const Operand& o, Index rows, Index b, Index t, Index h, Index head) {
  return base + (b * rows + t) * o.width + o.offset + h * head;
}

// Copies head h of batch entry b of an operand (rows x head numbers) into `out`, whose rows
// are `ld` long, transposed if asked. The caller zeroes `out`: the padding stays 0.
template <class T>
void load(const T* base, const Operand& o, Index rows, Index b, Index h, Index head,
          bool transposed, T* out, Index ld) {
  for (Index t = 0; t < rows; ++t) {
    const T* src = row(base, o, rows, b, t, h, head);
    if (transposed)
      for (Index c = 0; c < head; ++c) out[c * ld + t] = src[c];
    else
      std::copy_n(src, head, out + t * ld);
  }
}

// One vector register of T: the blocks below keep their sums in kWidth-long local arrays
// of constant length, which the compiler holds in a register across the loop over the
// shared axis (a sum kept in memory would wait on its own store at every step).
template <class T>
constexpr Index kWidth = 64 / sizeof(T);

Index padded(Index n, Index width) {
  return (n + width - 1) / width * width;
}

// out[0:n] = sum over c < m of a[c] * rows[c * ld + 0:n]; rows zero-padded to a multiple
// of kWidth columns. Scores (q K^T) and dP (dO V^T) are both this.
template <class T>
void row_times(const T* a, Index m, const T* rows, Index ld, Index n, T* out) {
  constexpr Index W = kWidth<T>;
  for (Index j0 = 0; j0 < n; j0 += W) {
    T acc[W] = {};
    for (Index c = 0; c < m; ++c) {
      const T ac = a[c];
      const T* r = rows + c * ld + j0;
#pragma omp simd
      for (Index l = 0; l < W; ++l) acc[l] += ac * r[l];
    }
    for (Index l = 0; l < W && j0 + l < n; ++l) out[j0 + l] = acc[l];
  }
}

template <class T>
void forward_head(const Geometry& g, const std::vector<const T*>& in, Index b, Index h, T* out,
                  T* weights, std::vector<T>& scratch) {
  const Index tkp = padded(g.tk, kWidth<T>), dvp = padded(g.dv, kWidth<T>);
  scratch.assign(g.d * tkp + g.tk * dvp + tkp, T(0));
  T* kt = scratch.data();  // K^T, d x Tk
  T* v = kt + g.d * tkp;   // V, Tk x dv
  T* s = v + g.tk * dvp;   // one row of scores
  load(in[g.k.input], g.k, g.tk, b, h, g.d, true, kt, tkp);
  load(in[g.v.input], g.v, g.tk, b, h, g.dv, false, v, dvp);
  const Operand out_layout{0, 0, g.heads * g.dv};
  for (Index i = 0; i < g.tq; ++i) {
    const Index n = g.causal ? i + 1 : g.tk;  // keys this query may see
    row_times(row(in[g.q.input], g.q, g.tq, b, i, h, g.d), g.d, kt, tkp, n, s);
    T m = -std::numeric_limits<T>::infinity();
    for (Index j = 0; j < n; ++j) {
      s[j] *= static_cast<T>(g.scale);
      m = s[j] > m ? s[j] : m;
    }
    T total = 0;
#pragma omp simd reduction(+ : total)
    for (Index j = 0; j < n; ++j) {
      s[j] = vector_math::exp(s[j] - m);
      total += s[j];
    }
    T* w = weights + ((b * g.heads + h) * g.tq + i) * g.tk;
    const T inv = T(1) / total;
    for (Index j = 0; j < g.tk; ++j) w[j] = j < n ? s[j] * inv : T(0);
    // o = w V: the transpose of row_times's layout, so its own loop.
    T* o = row(out, out_layout, g.tq, b, i, h, g.dv);
    constexpr Index W = kWidth<T>;
    for (Index c0 = 0; c0 < g.dv; c0 += W) {
      T acc[W] = {};
      for (Index j = 0; j < n; ++j) {
        const T wj = w[j];
        const T* vj = v + j * dvp + c0;
#pragma omp simd
        for (Index l = 0; l < W; ++l) acc[l] += wj * vj[l];
      }
      for (Index l = 0; l < W && c0 + l < g.dv; ++l) o[c0 + l] = acc[l];
    }
  }
}

template <class T>
void backward_head(const Geometry& g, const std::vector<const T*>& in, const T* weights,
                   const T* grad_out, const std::vector<T*>& grads, Index b, Index h,
                   std::vector<T>& scratch) {
  constexpr Index W = kWidth<T>;
  const Index d = g.d, dv = g.dv, tq = g.tq, tk = g.tk;
  const Index dp_ = padded(d, W), tkp = padded(tk, W);
  scratch.assign(tq * dp_ + tk * dp_ + dv * tkp + tk * dp_ + tk * dv + 2 * tkp, T(0));
  T* q = scratch.data();  // Q, Tq x d (rows padded)
  T* k = q + tq * dp_;    // K, Tk x d (rows padded)
  T* vt = k + tk * dp_;   // V^T, dv x Tk
  T* dk = vt + dv * tkp;  // accumulators, zeroed
  T* dvv = dk + tk * dp_;
  T* dp = dvv + tk * dv;
  T* ds = dp + tkp;
  load(in[g.q.input], g.q, tq, b, h, d, false, q, dp_);
  load(in[g.k.input], g.k, tk, b, h, d, false, k, dp_);
  load(in[g.v.input], g.v, tk, b, h, dv, true, vt, tkp);
  const Operand out_layout{0, 0, g.heads * dv};
  const T scale = static_cast<T>(g.scale);
  for (Index i = 0; i < tq; ++i) {
    const Index n = g.causal ? i + 1 : tk;
    const T* w = weights + ((b * g.heads + h) * tq + i) * tk;
    const T* go = row(grad_out, out_layout, tq, b, i, h, dv);
    row_times(go, dv, vt, tkp, n, dp);  // dP = dO V^T
    T dot = 0;                          // rowsum(P * dP)
#pragma omp simd reduction(+ : dot)
    for (Index j = 0; j < n; ++j) dot += w[j] * dp[j];
#pragma omp simd
    for (Index j = 0; j < n; ++j) ds[j] = w[j] * (dp[j] - dot) * scale;
    const T* qi = q + i * dp_;
    for (Index j = 0; j < n; ++j) {
      const T wj = w[j], sj = ds[j];
      T* dvj = dvv + j * dv;
      T* dkj = dk + j * dp_;
#pragma omp simd
      for (Index c = 0; c < dv; ++c) dvj[c] += wj * go[c];  // dV = P^T dO
#pragma omp simd
      for (Index c = 0; c < dp_; ++c) dkj[c] += sj * qi[c];  // dK = dS^T Q
    }
    T* dqi = row(grads[g.q.input], g.q, tq, b, i, h, d);  // dQ = dS K, straight into place
    for (Index c0 = 0; c0 < d; c0 += W) {
      T acc[W] = {};
      for (Index j = 0; j < n; ++j) {
        const T sj = ds[j];
        const T* kj = k + j * dp_ + c0;
#pragma omp simd
        for (Index l = 0; l < W; ++l) acc[l] += sj * kj[l];
      }
      for (Index l = 0; l < W && c0 + l < d; ++l) dqi[c0 + l] = acc[l];
    }
  }
  for (Index t = 0; t < tk; ++t) {
    std::copy_n(dk + t * dp_, d, row(grads[g.k.input], g.k, tk, b, t, h, d));
    std::copy_n(dvv + t * dv, dv, row(grads[g.v.input], g.v, tk, b, t, h, dv));
  }
}

// Runs body(b, h, scratch) for every (batch, head) pair, the pairs shared out to the threads
// when there is enough work. Each pair writes only its own rows and columns, so the result
// does not depend on the number of threads.
template <class T, class Body>
void for_each_head(const Geometry& g, const Body& body) {
  const Index pairs = g.batch * g.heads;
  const Index work = std::max<Index>(1, g.tq * g.tk * (g.d + g.dv));
  const Index grain = std::max<Index>(1, (Index{1} << 16) / work);
  parallel_for(pairs, grain, [&](Index begin, Index end) {
    std::vector<T> scratch;
    for (Index p = begin; p < end; ++p) body(p / g.heads, p % g.heads, scratch);
  });
}

Tensor attention_op(std::span<const Tensor> inputs, const Geometry& g) {
  std::vector<NDArray> values;
  for (const Tensor& x : inputs) values.push_back(x.data());
  const DType dtype = values[0].dtype();
  NDArray out = NDArray::empty({g.batch, g.tq, g.heads * g.dv}, dtype);
  NDArray weights = NDArray::empty({g.batch, g.heads, g.tq, g.tk}, dtype);
  dispatch_float(dtype, kOp, [&]<class T>() {
    std::vector<const T*> in;
    for (const NDArray& x : values) in.push_back(x.data<T>());
    for_each_head<T>(g, [&](Index b, Index h, std::vector<T>& scratch) {
      forward_head<T>(g, in, b, h, out.data<T>(), weights.data<T>(), scratch);
    });
  });
  // The inputs (queries, keys, values, and a bias when there is one), checked by the
  // backward for in-place changes; `weights` is the op's own array.
  static constexpr std::string_view kInputNames[] = {"input #0", "input #1", "input #2",
                                                     "input #3"};
  std::vector<SavedArray> saved;
  for (std::size_t i = 0; i < values.size(); ++i)
    saved.emplace_back(values[i], i < std::size(kInputNames) ? kInputNames[i] : "input");
  return make_op("fused_attention", out, inputs, [=](const NDArray& grad) -> Grads {
    Grads grads;
    for (const SavedArray& x : saved) grads.push_back(NDArray::empty(x.shape(), x.dtype()));
    dispatch_float(dtype, kOp, [&]<class T>() {
      std::vector<const T*> in;
      std::vector<T*> g_in;
      for (const SavedArray& x : saved) in.push_back(x.get().data<T>());
      for (NDArray& x : grads) g_in.push_back(x.data<T>());
      const NDArray& g_out = grad;
      for_each_head<T>(g, [&](Index b, Index h, std::vector<T>& scratch) {
        backward_head<T>(g, in, weights.data<T>(), g_out.data<T>(), g_in, b, h, scratch);
      });
    });
    return grads;
  });
}

void check_input(const Tensor& x, std::string_view what, Index width_multiple) {
  if (!x.defined() || x.ndim() != 3 || x.size(2) % width_multiple != 0)
    fail("{}: {} must be [B, T, W] with W a multiple of {}, got {}", kOp, what, width_multiple,
         x.defined() ? fmt::format("{}", x.shape()) : std::string("an undefined tensor"));
}

// Sizes: batch, queries, keys, heads, and the widths of q and v (all heads).
Geometry geometry(Index batch, Index tq, Index tk, Index heads, Index width, Index value_width,
                  const FusedAttentionOptions& options) {
  Geometry g;
  g.batch = batch;
  g.tq = tq;
  g.tk = tk;
  g.heads = heads;
  g.d = width / heads;
  g.dv = value_width / heads;
  g.causal = options.is_causal;
  g.scale = options.scale != 0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(g.d));
  return g;
}

void check_geometry(const Geometry& g, const Shape& q, const Shape& k) {
  if (g.d < 1 || g.tk < 1)
    fail("{}: needs at least one key and one number per head, got q {} and k {}", kOp, q, k);
  if (g.causal && g.tq != g.tk)
    fail("{}: is_causal needs as many queries as keys, got q {}, k {}", kOp, q, k);
}

}  // namespace

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, Index heads,
                       const FusedAttentionOptions& options) {
  if (heads < 1) fail("{}: heads must be at least 1, got {}", kOp, heads);
  check_input(q, "q", heads);
  check_input(k, "k", heads);
  check_input(v, "v", heads);
  if (k.size(2) != q.size(2) || k.size(0) != q.size(0) || v.size(0) != q.size(0) ||
      v.size(1) != k.size(1) || q.dtype() != k.dtype() || q.dtype() != v.dtype())
    fail(
        "{}: q {}, k {}, v {} must share the batch and dtype, q and k the width, k and v the "
        "length",
        kOp, q.shape(), k.shape(), v.shape());
  Geometry g = geometry(q.size(0), q.size(1), k.size(1), heads, q.size(2), v.size(2), options);
  g.q = {0, 0, q.size(2)};
  g.k = {1, 0, k.size(2)};
  g.v = {2, 0, v.size(2)};
  check_geometry(g, q.shape(), k.shape());
  const Tensor inputs[] = {q, k, v};
  return attention_op(inputs, g);
}

Tensor fused_self_attention(const Tensor& qkv, Index heads, const FusedAttentionOptions& options) {
  if (heads < 1) fail("{}: heads must be at least 1, got {}", kOp, heads);
  check_input(qkv, "qkv", 3 * heads);
  const Index width = qkv.size(2), e = width / 3;
  Geometry g = geometry(qkv.size(0), qkv.size(1), qkv.size(1), heads, e, e, options);
  g.q = {0, 0, width};
  g.k = {0, e, width};
  g.v = {0, 2 * e, width};
  check_geometry(g, qkv.shape(), qkv.shape());
  const Tensor inputs[] = {qkv};
  return attention_op(inputs, g);
}

}  // namespace attend::nn
