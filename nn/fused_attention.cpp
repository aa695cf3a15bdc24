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

#include <algorithm>
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

// Up to kRows rows of a product at once. Row r of a block is
//   out[r][0:keep[r]] = sum over c < len[r] of coef[r][c] * mat[c * ld + 0:keep[r]],
// every number summed in the order of c, exactly as the row alone would be. Done a row at a
// time, each of its sums would wait on its own previous multiply-add at every c (4 cycles);
// four rows keep four independent sums and share each load of mat. Scores (q K^T),
// o = w V, dP = dO V^T and dQ = dS K are all this.
constexpr Index kRows = 4;

template <class T>
struct RowBlock {
  Index count = 0;            // rows in the block, 1 to kRows
  const T* coef[kRows] = {};  // row r's coefficients
  Index len[kRows] = {};      // how many of them
  T* out[kRows] = {};         // where its product goes
  Index keep[kRows] = {};     // how many numbers of it are kept
};

template <class T>
void add_row(RowBlock<T>& b, const T* coef, Index len, T* out, Index keep) {
  b.coef[b.count] = coef;
  b.len[b.count] = len;
  b.out[b.count] = out;
  b.keep[b.count] = keep;
  ++b.count;
}

// mat's rows are zero-padded to a multiple of kWidth columns, at least the largest keep.
template <class T, int R>
void block_times(const RowBlock<T>& b, const T* mat, Index ld) {
  constexpr Index W = kWidth<T>;
  Index common = b.len[0], longest = b.len[0], width = b.keep[0];
  for (int r = 1; r < R; ++r) {
    common = std::min(common, b.len[r]);
    longest = std::max(longest, b.len[r]);
    width = std::max(width, b.keep[r]);
  }
  for (Index j0 = 0; j0 < width; j0 += W) {
    T acc[R][W] = {};
    for (Index c = 0; c < common; ++c) {  // every row has coefficient c
      const T* m = mat + c * ld + j0;
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const T a = b.coef[r][c];
#pragma omp simd
        for (Index l = 0; l < W; ++l) acc[r][l] += a * m[l];
      }
    }
    for (Index c = common; c < longest; ++c) {  // causal attention: the longer rows only
      const T* m = mat + c * ld + j0;
      for (int r = 0; r < R; ++r) {
        if (c >= b.len[r]) continue;
        const T a = b.coef[r][c];
#pragma omp simd
        for (Index l = 0; l < W; ++l) acc[r][l] += a * m[l];
      }
    }
    for (int r = 0; r < R; ++r) {
      const Index kept = std::min(W, b.keep[r] - j0);  // a whole vector but at the end
      if (kept == W)
        std::copy_n(acc[r], W, b.out[r] + j0);
      else
        for (Index l = 0; l < kept; ++l) b.out[r][j0 + l] = acc[r][l];
    }
  }
}

template <class T>
void block_times(const RowBlock<T>& b, const T* mat, Index ld) {
  switch (b.count) {
    case 4:
      return block_times<T, 4>(b, mat, ld);
    case 3:
      return block_times<T, 3>(b, mat, ld);
    case 2:
      return block_times<T, 2>(b, mat, ld);
    default:
      return block_times<T, 1>(b, mat, ld);
  }
}

// Row i's weights w = softmax(s * scale) over its n visible keys, zeros after them.
template <class T>
void softmax_row(T* s, Index n, Index tk, double scale, T* w) {
  T m = -std::numeric_limits<T>::infinity();
  const T factor = static_cast<T>(scale);
#pragma omp simd reduction(max : m)  // a maximum is exact in any order
  for (Index j = 0; j < n; ++j) {
    s[j] *= factor;
    m = s[j] > m ? s[j] : m;
  }
  T total = 0;
#pragma omp simd reduction(+ : total)
  for (Index j = 0; j < n; ++j) {
    s[j] = vector_math::exp(s[j] - m);
    total += s[j];
  }
  const T inv = T(1) / total;
#pragma omp simd
  for (Index j = 0; j < n; ++j) w[j] = s[j] * inv;
  std::fill(w + n, w + tk, T(0));  // the keys a causal query may not see
}

template <class T>
void forward_head(const Geometry& g, const std::vector<const T*>& in, Index b, Index h, T* out,
                  T* weights, std::vector<T>& scratch) {
  const Index tkp = padded(g.tk, kWidth<T>), dvp = padded(g.dv, kWidth<T>);
  scratch.assign(g.d * tkp + g.tk * dvp + kRows * tkp, T(0));
  T* kt = scratch.data();  // K^T, d x Tk
  T* v = kt + g.d * tkp;   // V, Tk x dv
  T* s = v + g.tk * dvp;   // kRows rows of scores
  load(in[g.k.input], g.k, g.tk, b, h, g.d, true, kt, tkp);
  load(in[g.v.input], g.v, g.tk, b, h, g.dv, false, v, dvp);
  const Operand out_layout{0, 0, g.heads * g.dv};
  for (Index i0 = 0; i0 < g.tq; i0 += kRows) {
    RowBlock<T> scores, values;
    T* w[kRows];  // the rows' weights, kept for the backward
    for (Index r = 0; r < std::min(kRows, g.tq - i0); ++r) {
      const Index i = i0 + r, n = g.causal ? i + 1 : g.tk;  // keys query i may see
      w[r] = weights + ((b * g.heads + h) * g.tq + i) * g.tk;
      add_row(scores, row(in[g.q.input], g.q, g.tq, b, i, h, g.d), g.d, s + r * tkp, n);
      add_row(values, w[r], n, row(out, out_layout, g.tq, b, i, h, g.dv), g.dv);
    }
    block_times(scores, kt, tkp);  // s = q K^T
    for (Index r = 0; r < scores.count; ++r)
      softmax_row(scores.out[r], scores.keep[r], g.tk, g.scale, w[r]);
    block_times(values, v, dvp);  // o = w V
  }
}

// dV += P^T dO and dK += dS^T Q for a block of query rows: for each key j, the rows' terms
// added in the rows' order (the order of a row at a time), the sums kept in registers.
template <class T>
void add_key_gradients(const RowBlock<T>& rows, const T* const* w, const T* go, const T* ds,
                       const T* q, T* dk, T* dv, Index dp_, Index dvp, Index tkp) {
  constexpr Index W = kWidth<T>;
  Index longest = 0;
  for (Index r = 0; r < rows.count; ++r) longest = std::max(longest, rows.keep[r]);
  for (Index j = 0; j < longest; ++j) {
    for (Index c0 = 0; c0 < dvp; c0 += W) {
      T acc[W];
      std::copy_n(dv + j * dvp + c0, W, acc);
      for (Index r = 0; r < rows.count; ++r) {
        if (j >= rows.keep[r]) continue;
        const T a = w[r][j];
        const T* x = go + r * dvp + c0;
#pragma omp simd
        for (Index l = 0; l < W; ++l) acc[l] += a * x[l];
      }
      std::copy_n(acc, W, dv + j * dvp + c0);
    }
    for (Index c0 = 0; c0 < dp_; c0 += W) {
      T acc[W];
      std::copy_n(dk + j * dp_ + c0, W, acc);
      for (Index r = 0; r < rows.count; ++r) {
        if (j >= rows.keep[r]) continue;
        const T a = ds[r * tkp + j];
        const T* x = q + r * dp_ + c0;
#pragma omp simd
        for (Index l = 0; l < W; ++l) acc[l] += a * x[l];
      }
      std::copy_n(acc, W, dk + j * dp_ + c0);
    }
  }
}

// Head h of batch entry b, its rows padded and zeroed where the backward needs them.
template <class T>
struct BackwardScratch {
  T *q, *k, *vt, *dk, *dv, *go, *dp, *ds;
};

template <class T>
BackwardScratch<T> backward_scratch(const Geometry& g, std::vector<T>& scratch) {
  constexpr Index W = kWidth<T>;
  const Index dp_ = padded(g.d, W), dvp = padded(g.dv, W), tkp = padded(g.tk, W);
  scratch.assign(g.tq * dp_ + 2 * g.tk * dp_ + g.dv * tkp + g.tk * dvp + kRows * (dvp + 2 * tkp),
                 T(0));
  BackwardScratch<T> s;
  s.q = scratch.data();      // Q, Tq x d (rows padded)
  s.k = s.q + g.tq * dp_;    // K, Tk x d (rows padded)
  s.vt = s.k + g.tk * dp_;   // V^T, dv x Tk
  s.dk = s.vt + g.dv * tkp;  // the sums dK and dV, zeroed (rows padded)
  s.dv = s.dk + g.tk * dp_;
  s.go = s.dv + g.tk * dvp;   // kRows rows of dO (padded)
  s.dp = s.go + kRows * dvp;  // kRows rows of dP and of dS
  s.ds = s.dp + kRows * tkp;
  return s;
}

template <class T>
void backward_head(const Geometry& g, const std::vector<const T*>& in, const T* weights,
                   const T* grad_out, const std::vector<T*>& grads, Index b, Index h,
                   std::vector<T>& scratch) {
  constexpr Index W = kWidth<T>;
  const Index d = g.d, dv = g.dv, tq = g.tq, tk = g.tk;
  const Index dp_ = padded(d, W), dvp = padded(dv, W), tkp = padded(tk, W);
  const BackwardScratch<T> s = backward_scratch(g, scratch);
  load(in[g.q.input], g.q, tq, b, h, d, false, s.q, dp_);
  load(in[g.k.input], g.k, tk, b, h, d, false, s.k, dp_);
  load(in[g.v.input], g.v, tk, b, h, dv, true, s.vt, tkp);
  const Operand out_layout{0, 0, g.heads * dv};
  const T scale = static_cast<T>(g.scale);
  for (Index i0 = 0; i0 < tq; i0 += kRows) {
    RowBlock<T> dps, dqs;
    const T* w[kRows];
    for (Index r = 0; r < std::min(kRows, tq - i0); ++r) {
      const Index i = i0 + r, n = g.causal ? i + 1 : tk;
      w[r] = weights + ((b * g.heads + h) * tq + i) * tk;
      std::copy_n(row(grad_out, out_layout, tq, b, i, h, dv), dv, s.go + r * dvp);
      add_row(dps, s.go + r * dvp, dv, s.dp + r * tkp, n);
      add_row(dqs, s.ds + r * tkp, n, row(grads[g.q.input], g.q, tq, b, i, h, d), d);
    }
    block_times(dps, s.vt, tkp);  // dP = dO V^T
    for (Index r = 0; r < dps.count; ++r) {
      const Index n = dps.keep[r];
      const T *dp = dps.out[r], *wr = w[r];  // (wr: read through w[r], the loop gathers)
      T* ds = s.ds + r * tkp;
      T dot = 0;  // rowsum(P * dP)
#pragma omp simd reduction(+ : dot)
      for (Index j = 0; j < n; ++j) dot += wr[j] * dp[j];
#pragma omp simd
      for (Index j = 0; j < n; ++j) ds[j] = wr[j] * (dp[j] - dot) * scale;
    }
    add_key_gradients(dps, w, s.go, s.ds, s.q + i0 * dp_, s.dk, s.dv, dp_, dvp, tkp);
    block_times(dqs, s.k, dp_);  // dQ = dS K, straight into place
  }
  for (Index t = 0; t < tk; ++t) {
    std::copy_n(s.dk + t * dp_, d, row(grads[g.k.input], g.k, tk, b, t, h, d));
    std::copy_n(s.dv + t * dvp, dv, row(grads[g.v.input], g.v, tk, b, t, h, dv));
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
