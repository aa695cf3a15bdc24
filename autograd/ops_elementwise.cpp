// Elementwise ops. Above each op: its forward formula and its derivative. The gradient of
// an input that was broadcast is summed back to the input's shape (sum_to), because each of
// its elements was used at every position it was repeated to.
#include <cmath>
#include <numbers>

#include "autograd/ops.h"
#include "autograd/saved_array.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/vector_math.h"

namespace attend {
namespace {
Tensor constant_like(double value, const Tensor& like) {
  return Tensor(NDArray::scalar(value, like.dtype()));
}
}  // namespace

// ---- binary ------------------------------------------------------------------------------

// z = a + b.  dz/da = 1, dz/db = 1
Tensor add(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  bool da = a.requires_grad(), db = b.requires_grad();
  return make_op("add", add(a.data(), b.data()), {a, b}, [=](const NDArray& g) -> Grads {
    return {da ? sum_to(g, sa) : NDArray(), db ? sum_to(g, sb) : NDArray()};
  });
}

// z = a - b.  dz/da = 1, dz/db = -1
Tensor sub(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  bool da = a.requires_grad(), db = b.requires_grad();
  return make_op("sub", sub(a.data(), b.data()), {a, b}, [=](const NDArray& g) -> Grads {
    return {da ? sum_to(g, sa) : NDArray(), db ? neg(sum_to(g, sb)) : NDArray()};
  });
}

// z = a * b.  dz/da = b, dz/db = a
Tensor mul(const Tensor& a, const Tensor& b) {
  SavedArray av(a.data(), "input #0"), bv(b.data(), "input #1");
  bool da = a.requires_grad(), db = b.requires_grad();
  return make_op("mul", mul(a.data(), b.data()), {a, b}, [=](const NDArray& g) -> Grads {
    return {da ? sum_to(g * bv, av.shape()) : NDArray(),
            db ? sum_to(g * av, bv.shape()) : NDArray()};
  });
}

// z = a / b.  dz/da = 1/b, dz/db = -a/b^2 = -z/b
Tensor div(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape();
  SavedArray bv(b.data(), "input #1");
  NDArray zv = div(a.data(), b.data());
  SavedArray z(zv, "output");
  bool da = a.requires_grad(), db = b.requires_grad();
  return make_op("div", zv, {a, b}, [=](const NDArray& g) -> Grads {
    return {da ? sum_to(g / bv, sa) : NDArray(),
            db ? neg(sum_to(g * z / bv, bv.shape())) : NDArray()};
  });
}

// ---- unary -------------------------------------------------------------------------------

// y = -x.  dy/dx = -1
Tensor neg(const Tensor& x) {
  return make_op("neg", neg(x.data()), {x}, [](const NDArray& g) -> Grads { return {neg(g)}; });
}

// y = e^x.  dy/dx = e^x = y
Tensor exp(const Tensor& x) {
  NDArray y = exp(x.data());
  return make_op("exp", y, {x},
                 [y = SavedArray(y, "output")](const NDArray& g) -> Grads { return {g * y}; });
}

// y = ln x.  dy/dx = 1/x
Tensor log(const Tensor& x) {
  SavedArray xv(x.data(), "input #0");
  return make_op("log", log(x.data()), {x}, [xv](const NDArray& g) -> Grads { return {g / xv}; });
}

// y = sqrt(x).  dy/dx = 1 / (2 sqrt(x)) = 1 / (2y)
Tensor sqrt(const Tensor& x) {
  NDArray y = sqrt(x.data());
  return make_op("sqrt", y, {x}, [y = SavedArray(y, "output")](const NDArray& g) -> Grads {
    return {map(g, y, [](auto g, auto y) { return g / (2 * y); })};
  });
}

// y = |x|.  dy/dx = sign(x)   (0 at x = 0)
Tensor abs(const Tensor& x) {
  SavedArray xv(x.data(), "input #0");
  return make_op("abs", abs(x.data()), {x},
                 [xv](const NDArray& g) -> Grads { return {g * sign(xv)}; });
}

// y = sin x.  dy/dx = cos x
Tensor sin(const Tensor& x) {
  SavedArray xv(x.data(), "input #0");
  return make_op("sin", sin(x.data()), {x},
                 [xv](const NDArray& g) -> Grads { return {g * cos(xv)}; });
}

// y = cos x.  dy/dx = -sin x
Tensor cos(const Tensor& x) {
  SavedArray xv(x.data(), "input #0");
  return make_op("cos", cos(x.data()), {x},
                 [xv](const NDArray& g) -> Grads { return {neg(g * sin(xv))}; });
}

// y = tanh x.  dy/dx = 1 - tanh^2 x = 1 - y^2
Tensor tanh(const Tensor& x) {
  NDArray y = tanh(x.data());
  return make_op("tanh", y, {x}, [y = SavedArray(y, "output")](const NDArray& g) -> Grads {
    return {map(g, y, [](auto g, auto y) { return g * (1 - y * y); })};
  });
}

// y = 1 / (1 + e^-x).  dy/dx = y (1 - y)
Tensor sigmoid(const Tensor& x) {
  NDArray y = sigmoid(x.data());
  return make_op("sigmoid", y, {x}, [y = SavedArray(y, "output")](const NDArray& g) -> Grads {
    return {map(g, y, [](auto g, auto y) { return g * y * (1 - y); })};
  });
}

// y = max(x, 0).  dy/dx = 1 if x > 0 else 0
Tensor relu(const Tensor& x) {
  NDArray y = relu(x.data());
  return make_op("relu", y, {x}, [y = SavedArray(y, "output")](const NDArray& g) -> Grads {
    return {map(g, y, [](auto g, auto y) { return y > 0 ? g : decltype(g)(0); })};
  });
}

// y = x Phi(x), Phi the standard normal CDF.  dy/dx = Phi(x) + x phi(x),
// phi(x) = e^(-x^2/2) / sqrt(2 pi) the normal density.
Tensor gelu(const Tensor& x) {
  SavedArray xv(x.data(), "input #0");
  return make_op("gelu", gelu(x.data()), {x}, [xv](const NDArray& g) -> Grads {
    return {map(g, xv, [](auto g, auto x) {
      using T = decltype(x);
      // vector_math: calls to libm's erf and exp would keep this loop scalar.
      const T cdf = T(0.5) * (1 + vector_math::erf(x * T(std::numbers::sqrt2 / 2)));
      const T pdf = vector_math::exp(T(-0.5) * x * x) *
                    T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
      return g * (cdf + x * pdf);
    })};
  });
}

// y = 0.5 x (1 + t), t = tanh(u), u = c (x + a x^3), c = sqrt(2/pi), a = 0.044715.
// dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
Tensor gelu(const Tensor& x, GeluApproximation approximate) {
  if (approximate == GeluApproximation::none) return gelu(x);
  SavedArray xv(x.data(), "input #0");
  return make_op("gelu_tanh", gelu_tanh(x.data()), {x}, [xv](const NDArray& g) -> Grads {
    return {map(g, xv, [](auto g, auto x) {
      using T = decltype(x);
      const T c = T(std::numbers::sqrt2 * std::numbers::inv_sqrtpi), a = T(0.044715);
      const T t = vector_math::tanh(c * (x + a * x * x * x));  // as the forward: vectorises
      return g * T(0.5) * (1 + t + x * (1 - t * t) * c * (1 + 3 * a * x * x));
    })};
  });
}

// y = x^c.  dy/dx = c x^(c-1)
Tensor pow(const Tensor& x, double exponent) {
  SavedArray xv(x.data(), "input #0");
  return make_op("pow", pow(x.data(), exponent), {x}, [xv, exponent](const NDArray& g) -> Grads {
    return {g * pow(xv, exponent - 1) * exponent};
  });
}

// y = min(max(x, low), high).  dy/dx = 1 for low <= x <= high, else 0
Tensor clamp(const Tensor& x, double low, double high) {
  SavedArray xv(x.data(), "input #0");
  return make_op("clamp", clamp(x.data(), low, high), {x}, [=](const NDArray& g) -> Grads {
    return {
        map(g, xv, [=](auto g, auto x) { return (x >= low && x <= high) ? g : decltype(g)(0); })};
  });
}

// z = cond ? a : b.  dz/da = cond, dz/db = 1 - cond
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  SavedArray c(cond.data(), "condition");
  Shape sa = a.shape(), sb = b.shape();
  NDArray zero = NDArray::scalar(0, a.dtype());
  return make_op("where", where(cond.data(), a.data(), b.data()), {a, b},
                 [=](const NDArray& g) -> Grads {
                   return {sum_to(where(c, g, zero), sa), sum_to(where(c, zero, g), sb)};
                 });
}

// y = mask ? value : x.  dy/dx = 1 - mask
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  SavedArray m(mask.data(), "mask");
  return make_op("masked_fill", masked_fill(x.data(), mask.data(), value), {x},
                 [m](const NDArray& g) -> Grads { return {masked_fill(g, m, 0)}; });
}

// y = x in another dtype.  dy/dx = 1 (converted back)
Tensor to_dtype(const Tensor& x, DType dtype) {
  DType from = x.dtype();
  return make_op("to_dtype", x.data().to(dtype), {x},
                 [from](const NDArray& g) -> Grads { return {g.to(from)}; });
}

// ---- comparisons (no gradient) -------------------------------------------------------------
Tensor eq(const Tensor& a, const Tensor& b) {
  return Tensor(eq(a.data(), b.data()));
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return Tensor(ne(a.data(), b.data()));
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return Tensor(lt(a.data(), b.data()));
}
Tensor le(const Tensor& a, const Tensor& b) {
  return Tensor(le(a.data(), b.data()));
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return Tensor(gt(a.data(), b.data()));
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return Tensor(ge(a.data(), b.data()));
}

// ---- operators -----------------------------------------------------------------------------
Tensor operator-(const Tensor& x) {
  return neg(x);
}
Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, constant_like(b, a));
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, constant_like(b, a));
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, constant_like(b, a));
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, constant_like(b, a));
}
Tensor operator+(double a, const Tensor& b) {
  return add(constant_like(a, b), b);
}
Tensor operator-(double a, const Tensor& b) {
  return sub(constant_like(a, b), b);
}
Tensor operator*(double a, const Tensor& b) {
  return mul(constant_like(a, b), b);
}
Tensor operator/(double a, const Tensor& b) {
  return div(constant_like(a, b), b);
}

}  // namespace attend
