// Element types. float32 is what models train in; float64 is what gradcheck uses, because
// finite differences in float32 lose about half of their digits; int64 holds indices (token
// ids, class labels, argmax results) and supports no arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tensor/error.h"

// Gradients and gradcheck need IEEE arithmetic: NaN and infinity kept (exp(-inf) = 0 in the
// masked softmax), sums not reordered. The compiler's "fast math" modes give up both, so a
// build that enables them stops here rather than computing wrong gradients quietly.
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "attend needs IEEE floating point: remove the fast-math / finite-math-only flags"
#endif

namespace attend {

enum class DType : std::uint8_t { f32, f64, i64 };

constexpr DType kFloat32 = DType::f32;
constexpr DType kFloat64 = DType::f64;
constexpr DType kInt64 = DType::i64;

constexpr std::size_t dtype_size(DType dtype) {
  return dtype == DType::f32 ? 4 : 8;
}

constexpr std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "float32";
    case DType::f64:
      return "float64";
    case DType::i64:
      return "int64";
  }
  return "?";
}

constexpr bool is_floating(DType dtype) {
  return dtype != DType::i64;
}

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::i64;
}

// Runs f with the C++ type that matches a floating dtype:
//   dispatch_float(x.dtype(), "exp", [&]<class T>() { ... T is float or double ... });
// An int64 array gets a clear error naming the operation.
template <class F>
decltype(auto) dispatch_float(DType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case DType::f32:
      return f.template operator()<float>();
    case DType::f64:
      return f.template operator()<double>();
    case DType::i64:
      break;
  }
  fail("{}: needs a floating-point array (float32 or float64), got int64", op);
}

// Same for code that works on every dtype (copies, shape operations, printing).
template <class F>
decltype(auto) dispatch_any(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32:
      return f.template operator()<float>();
    case DType::f64:
      return f.template operator()<double>();
    case DType::i64:
      return f.template operator()<std::int64_t>();
  }
  fail("unknown dtype {}", static_cast<int>(dtype));
}

}  // namespace attend
