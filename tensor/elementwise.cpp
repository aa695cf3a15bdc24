#include "tensor/elementwise.h"

#include <cmath>
#include <cstring>
#include <numbers>

#include "tensor/vector_math.h"

namespace attend {
namespace {

// ---- broadcasting ---------------------------------------------------------------------------
// How to walk two inputs that broadcast to one output. Each input gets a stride per output
// dimension, 0 where it is broadcast (its element is reused). Adjacent dimensions that both
// inputs traverse contiguously are merged, so that [64,32] + [64,32] is one loop of 2048
// and [64,32] + [32] is 64 rows of 32.
struct BroadcastPlan {
  int ndim = 0;
  std::array<Index, Shape::kMaxDims> shape{}, stride_a{}, stride_b{};
};

std::array<Index, Shape::kMaxDims> aligned_strides(const Shape& in, const Shape& out) {
  std::array<Index, Shape::kMaxDims> strides{};
  auto own = contiguous_strides(in);
  int offset = out.ndim() - in.ndim();
  for (int d = 0; d < out.ndim(); ++d) {
    int di = d - offset;
    strides[d] = (di >= 0 && in[di] != 1) ? own[di] : 0;
  }
  return strides;
}

BroadcastPlan plan_broadcast(const Shape& a, const Shape& b, const Shape& out) {
  auto sa = aligned_strides(a, out), sb = aligned_strides(b, out);
  BroadcastPlan plan;
  for (int d = 0; d < out.ndim(); ++d) {
    if (out[d] == 1) continue;  // size-1 dimensions do not move anything
    int last = plan.ndim - 1;
    bool mergeable =
        last >= 0 && plan.stride_a[last] == sa[d] * out[d] && plan.stride_b[last] == sb[d] * out[d];
    if (mergeable) {
      plan.shape[last] *= out[d];
      plan.stride_a[last] = sa[d];
      plan.stride_b[last] = sb[d];
    } else {
      plan.shape[plan.ndim] = out[d];
      plan.stride_a[plan.ndim] = sa[d];
      plan.stride_b[plan.ndim] = sb[d];
      plan.ndim++;
    }
  }
  return plan;
}

// Runs out[i] = op(a[..], b[..]) over the plan. The innermost loop has stride 0 or 1 in
// each input, and each of the four cases is a plain loop the compiler vectorises.
//
// About `#pragma omp simd` (here and in the other hot loops; the build passes
// -fopenmp-simd, which enables only these pragmas, no threads): at -O2, GCC 12 vectorises a
// loop only if it needs no run-time check that the output does not overlap the inputs. The
// pragma states that the iterations are independent, which is true here (the output is a
// new array), so the loop is vectorised without the check.
template <class T, class Op>
void broadcast_loop(const BroadcastPlan& p, const T* a, const T* b, T* out, Op op) {
  if (p.ndim == 0) {
    out[0] = op(a[0], b[0]);
    return;
  }
  const int last = p.ndim - 1;
  const Index inner = p.shape[last];
  const Index sa = p.stride_a[last], sb = p.stride_b[last];
  Index rows = 1;
  for (int d = 0; d < last; ++d) rows *= p.shape[d];

  std::array<Index, Shape::kMaxDims> counter{};
  Index offset_a = 0, offset_b = 0;
  for (Index r = 0; r < rows; ++r) {
    T* o = out + r * inner;
    const T* ra = a + offset_a;
    const T* rb = b + offset_b;
    if (sa == 1 && sb == 1) {
#pragma omp simd
      for (Index i = 0; i < inner; ++i) o[i] = op(ra[i], rb[i]);
    } else if (sa == 0 && sb == 1) {
      const T va = ra[0];
#pragma omp simd
      for (Index i = 0; i < inner; ++i) o[i] = op(va, rb[i]);
    } else if (sa == 1 && sb == 0) {
      const T vb = rb[0];
#pragma omp simd
      for (Index i = 0; i < inner; ++i) o[i] = op(ra[i], vb);
    } else {
      const T v = op(ra[0], rb[0]);
      for (Index i = 0; i < inner; ++i) o[i] = v;
    }
    // Advance to the next row like an odometer over dimensions last-1 ... 0.
    for (int d = last - 1; d >= 0; --d) {
      offset_a += p.stride_a[d];
      offset_b += p.stride_b[d];
      if (++counter[d] < p.shape[d]) break;
      offset_a -= p.stride_a[d] * p.shape[d];
      offset_b -= p.stride_b[d] * p.shape[d];
      counter[d] = 0;
    }
  }
}

template <class Op>
NDArray binary(const NDArray& a, const NDArray& b, std::string_view name, Op op) {
  check_defined(a, name, "first input");
  check_defined(b, name, "second input");
  check_same_dtype(a, b, name);
  Shape out_shape = broadcast_shapes(a.shape(), b.shape(), name);
  NDArray out = NDArray::empty(out_shape, a.dtype());
  BroadcastPlan plan = plan_broadcast(a.shape(), b.shape(), out_shape);
  dispatch_float(a.dtype(), name, [&]<class T>() {
    broadcast_loop<T>(plan, a.data<T>(), b.data<T>(), out.data<T>(), op);
  });
  return out;
}

template <class Op>
NDArray unary(const NDArray& x, std::string_view name, Op op) {
  check_defined(x, name);
  NDArray out = NDArray::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), name, [&]<class T>() {
    const T* in = x.data<T>();
    T* o = out.data<T>();
    for_each_range(x.numel(), [&](Index begin, Index end) {
#pragma omp simd
      for (Index i = begin; i < end; ++i) o[i] = op(in[i]);
    });
  });
  return out;
}

NDArray scalar_like(double value, const NDArray& like) {
  return NDArray::scalar(value, like.defined() ? like.dtype() : kFloat32);
}

}  // namespace

// ---- unary ----------------------------------------------------------------------------------
NDArray neg(const NDArray& x) {
  return unary(x, "neg", [](auto v) { return -v; });
}
NDArray exp(const NDArray& x) {
  return unary(x, "exp", [](auto v) { return vector_math::exp(v); });
}
NDArray log(const NDArray& x) {
  return unary(x, "log", [](auto v) { return std::log(v); });
}
NDArray sqrt(const NDArray& x) {
  return unary(x, "sqrt", [](auto v) { return std::sqrt(v); });
}
NDArray abs(const NDArray& x) {
  return unary(x, "abs", [](auto v) { return std::abs(v); });
}
NDArray sin(const NDArray& x) {
  return unary(x, "sin", [](auto v) { return std::sin(v); });
}
NDArray cos(const NDArray& x) {
  return unary(x, "cos", [](auto v) { return std::cos(v); });
}
NDArray tanh(const NDArray& x) {
  return unary(x, "tanh", [](auto v) { return vector_math::tanh(v); });
}

NDArray sign(const NDArray& x) {
  return unary(x, "sign", [](auto v) { return decltype(v)((v > 0) - (v < 0)); });
}

NDArray sigmoid(const NDArray& x) {
  return unary(x, "sigmoid", [](auto v) { return vector_math::sigmoid(v); });
}

// NaN passes through (v != v), as in PyTorch: a ReLU must not hide a NaN from the loss check.
NDArray relu(const NDArray& x) {
  return unary(x, "relu", [](auto v) { return v > 0 || v != v ? v : decltype(v)(0); });
}

NDArray gelu(const NDArray& x) {
  return unary(x, "gelu", [](auto v) {
    using T = decltype(v);
    return T(0.5) * v * (1 + vector_math::erf(v * T(std::numbers::sqrt2 / 2)));
  });
}

// vector_math::tanh, not std::tanh, so that the float32 loop vectorises (no libm call).
NDArray gelu_tanh(const NDArray& x) {
  return unary(x, "gelu_tanh", [](auto v) {
    using T = decltype(v);
    const T c = T(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
    return T(0.5) * v * (1 + vector_math::tanh(c * (v + T(0.044715) * v * v * v)));
  });
}

NDArray pow(const NDArray& x, double exponent) {
  if (exponent == 2) return unary(x, "pow", [](auto v) { return v * v; });
  if (exponent == 1) return x.clone();
  return unary(x, "pow", [exponent](auto v) {
    using T = decltype(v);
    return static_cast<T>(std::pow(v, static_cast<T>(exponent)));
  });
}

NDArray clamp(const NDArray& x, double low, double high) {
  if (low > high) fail("clamp: low {} is greater than high {}", low, high);
  return unary(x, "clamp", [low, high](auto v) {
    using T = decltype(v);
    return v < T(low) ? T(low) : (v > T(high) ? T(high) : v);
  });
}

// ---- binary ---------------------------------------------------------------------------------
NDArray add(const NDArray& a, const NDArray& b) {
  return binary(a, b, "add", [](auto x, auto y) { return x + y; });
}
NDArray sub(const NDArray& a, const NDArray& b) {
  return binary(a, b, "sub", [](auto x, auto y) { return x - y; });
}
NDArray mul(const NDArray& a, const NDArray& b) {
  return binary(a, b, "mul", [](auto x, auto y) { return x * y; });
}
NDArray div(const NDArray& a, const NDArray& b) {
  return binary(a, b, "div", [](auto x, auto y) { return x / y; });
}
NDArray pow(const NDArray& a, const NDArray& b) {
  return binary(a, b, "pow", [](auto x, auto y) { return std::pow(x, y); });
}
NDArray maximum(const NDArray& a, const NDArray& b) {
  return binary(a, b, "maximum", [](auto x, auto y) { return x > y ? x : y; });
}
NDArray minimum(const NDArray& a, const NDArray& b) {
  return binary(a, b, "minimum", [](auto x, auto y) { return x < y ? x : y; });
}
NDArray eq(const NDArray& a, const NDArray& b) {
  return binary(a, b, "eq", [](auto x, auto y) { return decltype(x)(x == y); });
}
NDArray ne(const NDArray& a, const NDArray& b) {
  return binary(a, b, "ne", [](auto x, auto y) { return decltype(x)(x != y); });
}
NDArray lt(const NDArray& a, const NDArray& b) {
  return binary(a, b, "lt", [](auto x, auto y) { return decltype(x)(x < y); });
}
NDArray le(const NDArray& a, const NDArray& b) {
  return binary(a, b, "le", [](auto x, auto y) { return decltype(x)(x <= y); });
}
NDArray gt(const NDArray& a, const NDArray& b) {
  return binary(a, b, "gt", [](auto x, auto y) { return decltype(x)(x > y); });
}
NDArray ge(const NDArray& a, const NDArray& b) {
  return binary(a, b, "ge", [](auto x, auto y) { return decltype(x)(x >= y); });
}

NDArray broadcast_to(const NDArray& x, const Shape& shape) {
  check_defined(x, "broadcast_to");
  if (broadcast_shapes(x.shape(), shape, "broadcast_to") != shape)
    fail("broadcast_to: shape {} cannot be broadcast to {}", x.shape(), shape);
  NDArray out = NDArray::empty(shape, x.dtype());
  BroadcastPlan plan = plan_broadcast(x.shape(), x.shape(), shape);
  dispatch_any(x.dtype(), [&]<class T>() {
    broadcast_loop<T>(plan, x.data<T>(), x.data<T>(), out.data<T>(), [](T v, T) { return v; });
  });
  return out;
}

NDArray where(const NDArray& cond, const NDArray& a, const NDArray& b) {
  check_defined(cond, "where", "condition");
  check_defined(a, "where", "first value");
  check_defined(b, "where", "second value");
  check_same_dtype(a, b, "where");
  check_same_dtype(cond, a, "where");
  Shape shape =
      broadcast_shapes(cond.shape(), broadcast_shapes(a.shape(), b.shape(), "where"), "where");
  auto expand = [&](const NDArray& x) { return x.shape() == shape ? x : broadcast_to(x, shape); };
  return map(expand(cond), expand(a), expand(b),
             [](auto c, auto x, auto y) { return c != 0 ? x : y; });
}

NDArray masked_fill(const NDArray& x, const NDArray& mask, double value) {
  check_defined(x, "masked_fill");
  check_defined(mask, "masked_fill", "mask");
  if (broadcast_shapes(x.shape(), mask.shape(), "masked_fill") != x.shape())
    fail("masked_fill: mask shape {} does not broadcast to the input shape {}", mask.shape(),
         x.shape());
  return where(mask.to(x.dtype()), scalar_like(value, x), x);
}

// ---- operators ------------------------------------------------------------------------------
NDArray operator-(const NDArray& x) {
  return neg(x);
}
NDArray operator+(const NDArray& a, const NDArray& b) {
  return add(a, b);
}
NDArray operator-(const NDArray& a, const NDArray& b) {
  return sub(a, b);
}
NDArray operator*(const NDArray& a, const NDArray& b) {
  return mul(a, b);
}
NDArray operator/(const NDArray& a, const NDArray& b) {
  return div(a, b);
}
NDArray operator+(const NDArray& a, double b) {
  return add(a, scalar_like(b, a));
}
NDArray operator-(const NDArray& a, double b) {
  return sub(a, scalar_like(b, a));
}
NDArray operator*(const NDArray& a, double b) {
  return mul(a, scalar_like(b, a));
}
NDArray operator/(const NDArray& a, double b) {
  return div(a, scalar_like(b, a));
}
NDArray operator+(double a, const NDArray& b) {
  return add(scalar_like(a, b), b);
}
NDArray operator-(double a, const NDArray& b) {
  return sub(scalar_like(a, b), b);
}
NDArray operator*(double a, const NDArray& b) {
  return mul(scalar_like(a, b), b);
}
NDArray operator/(double a, const NDArray& b) {
  return div(scalar_like(a, b), b);
}

// ---- in place -------------------------------------------------------------------------------
void add_(NDArray& dst, const NDArray& src, double alpha) {
  check_defined(dst, "add_", "destination");
  check_defined(src, "add_", "source");
  check_same_shape(dst, src, "add_");
  check_same_dtype(dst, src, "add_");
  dispatch_float(dst.dtype(), "add_", [&]<class T>() {
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    const T a = static_cast<T>(alpha);
    const Index n = dst.numel();
    if (alpha == 1.0) {
#pragma omp simd
      for (Index i = 0; i < n; ++i) d[i] += s[i];
    } else {
#pragma omp simd
      for (Index i = 0; i < n; ++i) d[i] += a * s[i];
    }
  });
}

void mul_(NDArray& dst, double factor) {
  check_defined(dst, "mul_", "destination");
  dispatch_float(dst.dtype(), "mul_", [&]<class T>() {
    const T f = static_cast<T>(factor);
    for (T& v : dst.span<T>()) v *= f;
  });
}

void fill_(NDArray& dst, double value) {
  check_defined(dst, "fill_", "destination");
  dispatch_any(dst.dtype(), [&]<class T>() {
    const T v = static_cast<T>(value);
    for (T& x : dst.span<T>()) x = v;
  });
}

void copy_(NDArray& dst, const NDArray& src) {
  check_defined(dst, "copy_", "destination");
  check_defined(src, "copy_", "source");
  check_same_shape(dst, src, "copy_");
  check_same_dtype(dst, src, "copy_");
  if (dst.nbytes() > 0 && dst.raw_data() != src.raw_data())
    std::memcpy(dst.raw_data(), src.raw_data(), dst.nbytes());
}

}  // namespace attend
