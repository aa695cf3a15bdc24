#include "tensor/reduce.h"

#include <cmath>
#include <limits>

#include "tensor/elementwise.h"

namespace attend {
namespace {

// A reduction over `axis` sees the array as [outer, n, inner]: n is the reduced size,
// outer the product of the sizes before it, inner the product after it. Element (o, k, i)
// sits at (o * n + k) * inner + i.
struct ReduceView {
  Index outer = 1, n = 1, inner = 1;
  Shape out_shape;
};

ReduceView reduce_view(const NDArray& x, int axis, bool keepdim, std::string_view op) {
  check_defined(x, op);
  int ax = normalize_axis(axis, x.ndim(), op);
  ReduceView v;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d < ax) v.outer *= x.shape()[d];
    if (d > ax) v.inner *= x.shape()[d];
  }
  v.n = x.shape()[ax];
  v.out_shape = x.shape();
  if (keepdim)
    v.out_shape[ax] = 1;
  else
    v.out_shape.erase(ax);
  return v;
}

// Calls row(o, i, first, stride) for every output element: the n inputs it reduces are
// first[0], first[stride], ..., first[(n-1)*stride].
template <class T, class Row>
void for_each_row(const ReduceView& v, const T* x, Row row) {
  for (Index o = 0; o < v.outer; ++o)
    for (Index i = 0; i < v.inner; ++i) row(o * v.inner + i, x + o * v.n * v.inner + i, v.inner);
}

void check_nonempty(const ReduceView& v, std::string_view op) {
  if (v.n == 0) fail("{}: cannot reduce an axis of size 0", op);
}

}  // namespace

NDArray sum(const NDArray& x, int axis, bool keepdim) {
  ReduceView v = reduce_view(x, axis, keepdim, "sum");
  NDArray out = NDArray::zeros(v.out_shape, x.dtype());
  dispatch_float(x.dtype(), "sum", [&]<class T>() {
    const T* in = x.data<T>();
    T* o = out.data<T>();
    if (v.inner == 1) {
      // Contiguous rows. The simd pragma allows the compiler to keep several partial sums
      // (a fixed, deterministic order), which also makes long sums more accurate.
      for (Index r = 0; r < v.outer; ++r) {
        const T* row = in + r * v.n;
        T s = 0;
#pragma omp simd reduction(+ : s)
        for (Index k = 0; k < v.n; ++k) s += row[k];
        o[r] = s;
      }
    } else {
      // Add whole rows of `inner` elements: contiguous and vectorised.
      for (Index r = 0; r < v.outer; ++r) {
        T* dst = o + r * v.inner;
        for (Index k = 0; k < v.n; ++k) {
          const T* src = in + (r * v.n + k) * v.inner;
#pragma omp simd
          for (Index i = 0; i < v.inner; ++i) dst[i] += src[i];
        }
      }
    }
  });
  return out;
}

NDArray mean(const NDArray& x, int axis, bool keepdim) {
  ReduceView v = reduce_view(x, axis, keepdim, "mean");
  check_nonempty(v, "mean");
  NDArray out = sum(x, axis, keepdim);
  mul_(out, 1.0 / static_cast<double>(v.n));
  return out;
}

NDArray max(const NDArray& x, int axis, bool keepdim) {
  ReduceView v = reduce_view(x, axis, keepdim, "max");
  check_nonempty(v, "max");
  NDArray out = NDArray::empty(v.out_shape, x.dtype());
  dispatch_float(x.dtype(), "max", [&]<class T>() {
    T* o = out.data<T>();
    for_each_row(v, x.data<T>(), [&](Index j, const T* first, Index stride) {
      T best = first[0];
      for (Index k = 1; k < v.n; ++k) best = first[k * stride] > best ? first[k * stride] : best;
      o[j] = best;
    });
  });
  return out;
}

NDArray min(const NDArray& x, int axis, bool keepdim) {
  return neg(max(neg(x), axis, keepdim));
}

NDArray argmax(const NDArray& x, int axis, bool keepdim) {
  ReduceView v = reduce_view(x, axis, keepdim, "argmax");
  check_nonempty(v, "argmax");
  NDArray out = NDArray::empty(v.out_shape, kInt64);
  std::int64_t* o = out.data<std::int64_t>();
  dispatch_float(x.dtype(), "argmax", [&]<class T>() {
    for_each_row(v, x.data<T>(), [&](Index j, const T* first, Index stride) {
      Index best = 0;
      for (Index k = 1; k < v.n; ++k)
        if (first[k * stride] > first[best * stride]) best = k;
      o[j] = best;
    });
  });
  return out;
}

NDArray logsumexp(const NDArray& x, int axis, bool keepdim) {
  ReduceView v = reduce_view(x, axis, keepdim, "logsumexp");
  check_nonempty(v, "logsumexp");
  NDArray out = NDArray::empty(v.out_shape, x.dtype());
  dispatch_float(x.dtype(), "logsumexp", [&]<class T>() {
    T* o = out.data<T>();
    for_each_row(v, x.data<T>(), [&](Index j, const T* first, Index stride) {
      T m = first[0];
      for (Index k = 1; k < v.n; ++k) m = first[k * stride] > m ? first[k * stride] : m;
      // A row of all -inf (everything masked) has logsumexp -inf, not NaN.
      if (std::isinf(m)) {
        o[j] = m;
        return;
      }
      T s = 0;
      for (Index k = 0; k < v.n; ++k) s += std::exp(first[k * stride] - m);
      o[j] = m + std::log(s);
    });
  });
  return out;
}

NDArray sum(const NDArray& x) {
  check_defined(x, "sum");
  return sum(x.reshape(Shape{x.numel()}), 0, false);
}

NDArray mean(const NDArray& x) {
  check_defined(x, "mean");
  if (x.numel() == 0) fail("mean: the array is empty");
  return mean(x.reshape(Shape{x.numel()}), 0, false);
}

NDArray max(const NDArray& x) {
  check_defined(x, "max");
  return max(x.reshape(Shape{x.numel()}), 0, false);
}

NDArray sum_to(const NDArray& x, const Shape& shape) {
  check_defined(x, "sum_to");
  if (x.shape() == shape) return x;
  if (broadcast_shapes(shape, x.shape(), "sum_to") != x.shape())
    fail("sum_to: shape {} is not a broadcast of {}", x.shape(), shape);
  // Sum away the leading dimensions that `shape` lacks, then every dimension where `shape`
  // has size 1 (keeping it, so the result has exactly `shape`).
  NDArray out = x;
  int extra = x.ndim() - shape.ndim();
  for (int d = 0; d < extra; ++d) out = sum(out, 0, false);
  for (int d = 0; d < shape.ndim(); ++d)
    if (shape[d] == 1 && out.shape()[d] != 1) out = sum(out, d, true);
  return out.reshape(shape);
}

double squared_norm(const NDArray& x) {
  check_defined(x, "squared_norm");
  return dispatch_float(x.dtype(), "squared_norm", [&]<class T>() {
    double s = 0;
    for (T v : x.span<T>()) s += static_cast<double>(v) * v;
    return s;
  });
}

}  // namespace attend
