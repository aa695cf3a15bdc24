// Elementwise math: one output element per input element.
//
// Binary operations broadcast like NumPy: shapes are aligned at the right, and a size-1 (or
// missing) dimension is repeated to match the other. [4,3] + [3] adds the row to each of
// the 4 rows; [4,1] * [1,3] gives a [4,3] outer product. Both inputs must share a dtype.
//
// map() applies your own formula to every element, in one pass that the compiler can
// vectorise; the backward formulas in autograd/ are written with it:
//   NDArray dx = map(g, y, [](auto g, auto y) { return g * (1 - y * y); });  // tanh'
#pragma once

#include "tensor/ndarray.h"
#include "tensor/parallel.h"

namespace attend {

// ---- unary ----------------------------------------------------------------------------------
NDArray neg(const NDArray& x);
NDArray exp(const NDArray& x);
NDArray log(const NDArray& x);
NDArray sqrt(const NDArray& x);
NDArray abs(const NDArray& x);
NDArray sign(const NDArray& x);  // -1, 0 or 1
NDArray sin(const NDArray& x);
NDArray cos(const NDArray& x);
NDArray tanh(const NDArray& x);
NDArray sigmoid(const NDArray& x);  // 1 / (1 + e^-x)
NDArray relu(const NDArray& x);     // max(x, 0)
NDArray gelu(const NDArray& x);     // x * Phi(x), Phi the standard normal CDF (exact, with erf)
// GELU's tanh approximation (Hendrycks & Gimpel 2016, section 2; GPT-2 and BERT use it):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), within 5e-4 of the exact gelu(x).
NDArray gelu_tanh(const NDArray& x);
NDArray pow(const NDArray& x, double exponent);
NDArray clamp(const NDArray& x, double low, double high);

// ---- binary, broadcasting --------------------------------------------------------------------
NDArray add(const NDArray& a, const NDArray& b);
NDArray sub(const NDArray& a, const NDArray& b);
NDArray mul(const NDArray& a, const NDArray& b);
NDArray div(const NDArray& a, const NDArray& b);
NDArray pow(const NDArray& a, const NDArray& b);
NDArray maximum(const NDArray& a, const NDArray& b);
NDArray minimum(const NDArray& a, const NDArray& b);
// Comparisons give 1 where true and 0 where false, in the inputs' dtype.
NDArray eq(const NDArray& a, const NDArray& b);
NDArray ne(const NDArray& a, const NDArray& b);
NDArray lt(const NDArray& a, const NDArray& b);
NDArray le(const NDArray& a, const NDArray& b);
NDArray gt(const NDArray& a, const NDArray& b);
NDArray ge(const NDArray& a, const NDArray& b);

// where(cond, a, b): a where cond != 0, else b (all three broadcast together).
NDArray where(const NDArray& cond, const NDArray& a, const NDArray& b);
// x with `value` wherever mask != 0 (mask broadcasts to x's shape).
NDArray masked_fill(const NDArray& x, const NDArray& mask, double value);
// x repeated along its size-1 (or missing leading) dimensions to `shape`; a copy.
NDArray broadcast_to(const NDArray& x, const Shape& shape);

// ---- operators (a scalar operand takes the array's dtype) -------------------------------
NDArray operator-(const NDArray& x);
NDArray operator+(const NDArray& a, const NDArray& b);
NDArray operator-(const NDArray& a, const NDArray& b);
NDArray operator*(const NDArray& a, const NDArray& b);
NDArray operator/(const NDArray& a, const NDArray& b);
NDArray operator+(const NDArray& a, double b);
NDArray operator-(const NDArray& a, double b);
NDArray operator*(const NDArray& a, double b);
NDArray operator/(const NDArray& a, double b);
NDArray operator+(double a, const NDArray& b);
NDArray operator-(double a, const NDArray& b);
NDArray operator*(double a, const NDArray& b);
NDArray operator/(double a, const NDArray& b);

// ---- in place: these write into dst's memory, seen by every array that shares it -----------
void add_(NDArray& dst, const NDArray& src, double alpha = 1.0);  // dst += alpha * src
void mul_(NDArray& dst, double factor);                           // dst *= factor
void fill_(NDArray& dst, double value);
void copy_(NDArray& dst, const NDArray& src);  // same shape and dtype

// ---- your own elementwise formula ---------------------------------------------------------
// The lambda is called with float or double values (the arrays' dtype); write it with
// `auto` parameters. All arrays must have the same shape and dtype. (The simd pragma tells
// the compiler that the iterations are independent, so it vectorises the loop without a
// run-time overlap check: the output is always a new array. Large arrays are shared out to
// the threads: see for_each_range in tensor/parallel.h.)
template <class F>
NDArray map(const NDArray& x, F f) {
  check_defined(x, "map");
  NDArray out = NDArray::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), "map", [&]<class T>() {
    const T* in = x.data<T>();
    T* o = out.data<T>();
    for_each_range(x.numel(), [&](Index begin, Index end) {
#pragma omp simd
      for (Index i = begin; i < end; ++i) o[i] = static_cast<T>(f(in[i]));
    });
  });
  return out;
}

template <class F>
NDArray map(const NDArray& a, const NDArray& b, F f) {
  check_defined(a, "map");
  check_defined(b, "map");
  check_same_shape(a, b, "map");
  check_same_dtype(a, b, "map");
  NDArray out = NDArray::empty(a.shape(), a.dtype());
  dispatch_float(a.dtype(), "map", [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* o = out.data<T>();
    for_each_range(a.numel(), [&](Index begin, Index end) {
#pragma omp simd
      for (Index i = begin; i < end; ++i) o[i] = static_cast<T>(f(pa[i], pb[i]));
    });
  });
  return out;
}

template <class F>
NDArray map(const NDArray& a, const NDArray& b, const NDArray& c, F f) {
  check_defined(a, "map");
  check_defined(b, "map");
  check_defined(c, "map");
  check_same_shape(a, b, "map");
  check_same_shape(a, c, "map");
  check_same_dtype(a, b, "map");
  check_same_dtype(a, c, "map");
  NDArray out = NDArray::empty(a.shape(), a.dtype());
  dispatch_float(a.dtype(), "map", [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const T* pc = c.data<T>();
    T* o = out.data<T>();
    for_each_range(a.numel(), [&](Index begin, Index end) {
#pragma omp simd
      for (Index i = begin; i < end; ++i) o[i] = static_cast<T>(f(pa[i], pb[i], pc[i]));
    });
  });
  return out;
}

}  // namespace attend
