#include "tensor/softmax.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "tensor/vector_math.h"

namespace attend {
namespace {

// The arrays are seen as [outer, n, inner]; each (outer, inner) pair is one row of n
// elements spaced `inner` apart (1 for the usual last axis).
struct Rows {
  Index outer = 1, n = 1, inner = 1;
};

Rows rows_of(const NDArray& x, int axis, std::string_view op) {
  check_defined(x, op);
  int a = normalize_axis(axis, x.ndim(), op);
  Rows r;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d < a) r.outer *= x.shape()[d];
    if (d > a) r.inner *= x.shape()[d];
  }
  r.n = x.shape()[a];
  return r;
}

// Calls body(first, stride) for every row. Rows along the last axis (the usual case) get
// their stride as the compile-time constant 1, so that the loops in the body vectorise.
template <class T, class Body>
void for_each_row(const Rows& r, Body body) {
  if (r.inner == 1) {
    for (Index o = 0; o < r.outer; ++o) body(o * r.n, std::integral_constant<Index, 1>{});
    return;
  }
  for (Index o = 0; o < r.outer; ++o)
    for (Index i = 0; i < r.inner; ++i) body(o * r.n * r.inner + i, r.inner);
}

template <bool kLog>
NDArray softmax_impl(const NDArray& x, int axis, std::string_view op) {
  Rows r = rows_of(x, axis, op);
  NDArray out = NDArray::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), op, [&]<class T>() {
    const T* in = x.data<T>();
    T* o = out.data<T>();
    for_each_row<T>(r, [&](Index first, auto stride) {
      const T* xr = in + first;
      T* yr = o + first;
      T m = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : m)
      for (Index k = 0; k < r.n; ++k) m = xr[k * stride] > m ? xr[k * stride] : m;
      if (m == -std::numeric_limits<T>::infinity()) {  // every position masked, or NaN
        // The max above skips NaN (a comparison with NaN is false), so a row of NaN lands
        // here too; it must give NaN, not the masked row's 0 (or -inf, which a loss would
        // turn into +inf and hide where the NaN came from).
        bool has_nan = false;
        for (Index k = 0; k < r.n; ++k) has_nan = has_nan || std::isnan(xr[k * stride]);
        const T fill = has_nan ? std::numeric_limits<T>::quiet_NaN() : kLog ? m : T(0);
        for (Index k = 0; k < r.n; ++k) yr[k * stride] = fill;
        return;
      }
      T s = 0;
#pragma omp simd reduction(+ : s)
      for (Index k = 0; k < r.n; ++k) {
        T e = vector_math::exp(xr[k * stride] - m);
        if (!kLog) yr[k * stride] = e;
        s += e;
      }
      if (kLog) {
        const T log_s = m + std::log(s);
#pragma omp simd
        for (Index k = 0; k < r.n; ++k) yr[k * stride] = xr[k * stride] - log_s;
      } else {
        const T inv = T(1) / s;
#pragma omp simd
        for (Index k = 0; k < r.n; ++k) yr[k * stride] *= inv;
      }
    });
  });
  return out;
}

}  // namespace

NDArray softmax(const NDArray& x, int axis) {
  return softmax_impl<false>(x, axis, "softmax");
}
NDArray log_softmax(const NDArray& x, int axis) {
  return softmax_impl<true>(x, axis, "log_softmax");
}

NDArray softmax_backward(const NDArray& grad, const NDArray& y, int axis) {
  check_same_shape(grad, y, "softmax_backward");
  check_same_dtype(grad, y, "softmax_backward");
  Rows r = rows_of(y, axis, "softmax_backward");
  NDArray out = NDArray::empty(y.shape(), y.dtype());
  dispatch_float(y.dtype(), "softmax_backward", [&]<class T>() {
    const T* g = grad.data<T>();
    const T* py = y.data<T>();
    T* o = out.data<T>();
    for_each_row<T>(r, [&](Index first, auto stride) {
      T dot = 0;
#pragma omp simd reduction(+ : dot)
      for (Index k = 0; k < r.n; ++k) dot += g[first + k * stride] * py[first + k * stride];
#pragma omp simd
      for (Index k = 0; k < r.n; ++k) {
        const Index j = first + k * stride;
        o[j] = py[j] * (g[j] - dot);
      }
    });
  });
  return out;
}

NDArray log_softmax_backward(const NDArray& grad, const NDArray& y, int axis) {
  check_same_shape(grad, y, "log_softmax_backward");
  check_same_dtype(grad, y, "log_softmax_backward");
  Rows r = rows_of(y, axis, "log_softmax_backward");
  NDArray out = NDArray::empty(y.shape(), y.dtype());
  dispatch_float(y.dtype(), "log_softmax_backward", [&]<class T>() {
    const T* g = grad.data<T>();
    const T* py = y.data<T>();
    T* o = out.data<T>();
    for_each_row<T>(r, [&](Index first, auto stride) {
      T total = 0;
#pragma omp simd reduction(+ : total)
      for (Index k = 0; k < r.n; ++k) total += g[first + k * stride];
#pragma omp simd
      for (Index k = 0; k < r.n; ++k) {
        const Index j = first + k * stride;
        o[j] = g[j] - vector_math::exp(py[j]) * total;
      }
    });
  });
  return out;
}

}  // namespace attend
