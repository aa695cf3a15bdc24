// exp, tanh, sigmoid and erf for float32 written so that a loop over an array compiles to SIMD
// instructions: only arithmetic, comparisons and bit reinterpretation, no calls and no
// branches. libm's expf and tanhf are calls, one element at a time; in a recurrent network
// they were a fifth of the training time.
//
// The methods are Cephes' (S. Moshier): exp by range reduction, e^x = 2^n e^r with
// |r| <= ln(2)/2, and a degree-6 polynomial for e^r; tanh by an odd polynomial near 0 and
// 1 - 2 / (e^2x + 1) elsewhere. Both are within 2 ulp of the correctly rounded value over
// the float range (tests/tensor/test_vector_math.cpp checks this against double precision).
// float64 keeps libm: it only serves gradient checks, where accuracy is all that counts.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace attend::vector_math {

// e^x. Below x = -87.3 the result is 0 (where IEEE would give a denormal; e^-inf is
// exactly 0, which masked attention relies on), above x = 88 it is infinity (the true
// value overflows from 88.72). NaN stays NaN.
inline float exp(float x) {
  constexpr float kMax = 88.0f, kMin = -87.3f;
  const float input = x;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  x = x > kMax ? kMax : x;
  x = x < kMin ? kMin : x;
  // n = round(x / ln 2), read from the low bits of (x log2(e) + 1.5*2^23): no float->int
  // cast (undefined for NaN), and unsigned arithmetic, which wraps instead of overflowing.
  const float shifted = x * kLog2e + kRound;
  const std::uint32_t n_bits =
      std::bit_cast<std::uint32_t>(shifted) - std::bit_cast<std::uint32_t>(kRound);
  const float nf = shifted - kRound;
  // r = x - n ln 2, in two parts so that the product is exact (Cody and Waite).
  const float r = (x - nf * kLn2High) - nf * kLn2Low;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = 1.0f + r + r * r * p;
  // 2^n built from its bits: the exponent field is n + 127 (between 1 and 254 here).
  const float two_n = std::bit_cast<float>((n_bits + 127u) << 23);
  const float result = er * two_n;
  // Selects, not branches: the loop still vectorises.
  const float low = input < kMin ? 0.0f : result;
  return input > kMax ? __builtin_inff() : low;
}

// tanh(x) = x + x^3 P(x^2) for |x| < 0.625 (where 1 - 2/(e^2x + 1) would lose digits to
// cancellation), else sign(x) (1 - 2 / (e^2|x| + 1)).
inline float tanh(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = x + x * z * p;
  const float large = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  const float signed_large = x < 0 ? -large : large;
  return a < 0.625f ? small : signed_large;
}

// 1 / (1 + e^-x)
inline float sigmoid(float x) {
  return 1.0f / (1.0f + exp(-x));
}

// erf(x), for GELU. |x| < 1: x P(x^2), P of degree 6 fitted to erf(x)/x; 1 <= |x| < 4:
// sign(x) (1 - e^-x^2 R(1/|x|)), R of degree 9 fitted to e^(x^2) erfc(x) (both fits are
// weighted least squares on Chebyshev nodes, relative error below 1e-8); |x| >= 4: sign(x)
// (erf(3.92) already rounds to 1 in float32). Within 3 ulp of the correctly rounded value
// (tests/tensor/test_vector_math.cpp). NaN stays NaN.
inline float erf(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  float p = 7.8982102057e-05f;
  p = p * z - 8.0243541283e-04f;
  p = p * z + 5.1900535778e-03f;
  p = p * z - 2.6854808537e-02f;
  p = p * z + 1.1283612428e-01f;
  p = p * z - 3.7612628843e-01f;
  p = p * z + 1.1283791665e+00f;
  const float small = x * p;
  const float b = a < 1.0f ? 1.0f : (a > 4.0f ? 4.0f : a);  // the large branch's range
  const float t = 1.0f / b;
  float r = 3.2065836217e-02f;
  r = r * t - 1.8719515352e-01f;
  r = r * t + 4.5621402059e-01f;
  r = r * t - 5.6150390564e-01f;
  r = r * t + 2.5932661416e-01f;
  r = r * t + 2.1876548179e-01f;
  r = r * t - 3.7169362070e-01f;
  r = r * t + 1.9603914903e-02f;
  r = r * t + 5.6188572645e-01f;
  r = r * t + 1.1466929604e-04f;
  const float large = a >= 4.0f ? 1.0f : 1.0f - exp(-b * b) * r;
  const float signed_large = x < 0 ? -large : large;
  return a < 1.0f || a != a ? small : signed_large;
}

// float64: libm, so that code written for either type can call vector_math::exp(v).
inline double exp(double x) {
  return std::exp(x);
}
inline double tanh(double x) {
  return std::tanh(x);
}
inline double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}
inline double erf(double x) {
  return std::erf(x);
}

// acc + x y as the course's GEMM and its compiled loops compute it: rounded once (a fused
// multiply-add) where the processor has them, else a multiply and an add, rounded twice (an
// x86-64 build without FMA, where std::fma would be a slow libm call, and other bits). For
// code that must give the bits of a GEMM or of a loop the compiler contracted.
template <class T>
inline T multiply_add(T x, T y, T acc) {
#if defined(__AVX512F__) || defined(__FMA__)
  return std::fma(x, y, acc);
#else
  return acc + x * y;
#endif
}

}  // namespace attend::vector_math
