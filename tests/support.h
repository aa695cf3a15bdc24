// Small helpers shared by the test files.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::testing {

// A float64 array from a list of values (tests compare exactly representable numbers).
inline NDArray f64(std::initializer_list<double> values, const Shape& shape) {
  return NDArray::from_list(values, shape, kFloat64);
}

inline NDArray ids(std::initializer_list<double> values, const Shape& shape) {
  return NDArray::from_list(values, shape, kInt64);
}

// Equal shapes, dtypes and bytes, for code that promises the same bits as another path:
// -0 and +0 differ, a NaN equals itself. Float arrays only (float32 or float64).
inline bool same_bits(const NDArray& a, const NDArray& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  return dispatch_float(a.dtype(), "same_bits", [&]<class T>() {
    return std::memcmp(a.data<T>(), b.data<T>(), sizeof(T) * a.numel()) == 0;
  });
}

// The same number of arrays, and each pair with the same bits (same_bits): one check per pair.
inline void check_same_bits(const std::vector<NDArray>& actual,
                            const std::vector<NDArray>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("array " << i);
    CHECK(same_bits(actual[i], expected[i]));
  }
}

// Every element of `actual` is within `tolerance` of `expected` (and the shapes match).
// One check for the whole array (a Catch2 check per element cost seconds on arrays of a
// million elements); a failure lists how many elements differ and the first few of them.
// The comparison is Catch's WithinAbs: a NaN never passes, equal infinities do.
inline void check_close(const NDArray& actual, const NDArray& expected, double tolerance = 1e-12) {
  REQUIRE(actual.shape() == expected.shape());
  const std::vector<double> a = actual.to_vector(), e = expected.to_vector();
  std::size_t differing = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (e[i] + tolerance >= a[i] && a[i] + tolerance >= e[i]) continue;
    if (++differing <= 5)
      first << "\n  element " << i << ": " << a[i] << " where " << e[i] << " is expected";
  }
  INFO(differing << " of " << a.size() << " elements of shape " << to_string(actual.shape())
                 << " differ by more than " << tolerance << first.str());
  CHECK(differing == 0);
}

// The message of the attend::Error thrown by f (fails the test if none is thrown).
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected an attend::Error");
  return "";
}

// Parameters of a module appended to gradcheck's inputs (they are the tensors it perturbs).
inline std::vector<Tensor> with_parameters(std::vector<Tensor> inputs, const nn::Module& m) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// Sets the kernels' thread count for one scope and restores it after.
struct ThreadCount {
  int saved = num_threads();
  explicit ThreadCount(int n) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved); }
};

}  // namespace attend::testing
