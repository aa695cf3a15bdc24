#include "lesson.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace attend::lesson01 {

// ---- 2. memory layout --------------------------------------------------------------------

Index row_major_offset(const Shape& shape, std::span<const Index> index) {
  if (static_cast<int>(index.size()) != shape.ndim())
    fail("row_major_offset: {} indices given for shape {}", index.size(), shape);
  // contiguous_strides (tensor/shape.cpp) walks the axes from the last one: stride 1, then
  // times each size. The offset is the dot product of the index with the strides.
  auto strides = contiguous_strides(shape);
  Index offset = 0;
  for (int d = 0; d < shape.ndim(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d])
      fail("row_major_offset: index {} is out of range for axis {} of shape {}", index[d], d,
           shape);
    offset += index[d] * strides[d];
  }
  return offset;
}

Index row_major_offset(const Shape& shape, std::initializer_list<Index> index) {
  return row_major_offset(shape, std::span<const Index>(index.begin(), index.size()));
}

std::vector<Index> strides_of(const Shape& shape) {
  auto strides = contiguous_strides(shape);
  return {strides.begin(), strides.begin() + shape.ndim()};
}

std::vector<Index> transposed_view_strides(const Shape& shape) {
  if (shape.ndim() < 2) fail("transposed_view_strides: needs 2 dimensions, got {}", shape);
  std::vector<Index> strides = strides_of(shape);
  std::swap(strides[strides.size() - 2], strides[strides.size() - 1]);
  return strides;
}

// ---- 3. broadcasting ---------------------------------------------------------------------

BroadcastResult broadcast_result(const Shape& a, const Shape& b) {
  BroadcastResult result;
  result.a = a;
  result.b = b;
  try {
    result.shape = broadcast_shapes(a, b, "add");  // the rule add() applies (tensor/shape.cpp)
    result.ok = true;
  } catch (const Error& e) {
    result.error = e.what();
  }
  return result;
}

std::vector<BroadcastResult> broadcast_table() {
  return {
      broadcast_result({4, 3}, {3}),        // a row added to every row
      broadcast_result({4, 1}, {1, 3}),     // a column times a row: outer product
      broadcast_result({}, {2, 3}),         // a 0-d scalar goes everywhere
      broadcast_result({2, 1, 3}, {4, 1}),  // missing leading axes count as size 1
      broadcast_result({5}, {5, 1}),        // a surprise: [5,5], not [5]
      broadcast_result({8, 1, 6, 1}, {7, 1, 5}),
      broadcast_result({4, 3}, {4}),     // 3 vs 4 in the last axis: an error
      broadcast_result({3, 4}, {2, 4}),  // 3 vs 2: neither is 1, an error
  };
}

NDArray outer_product(const NDArray& column, const NDArray& row) {
  if (column.ndim() != 1 || row.ndim() != 1)
    fail("outer_product: needs two 1-D arrays, got {} and {}", column.shape(), row.shape());
  // reshape shares memory: these two views cost nothing.
  return column.reshape({-1, 1}) * row.reshape({1, -1});
}

// ---- 4. reductions -----------------------------------------------------------------------

NDArray normalize_rows(const NDArray& x) {
  return x / sum(x, 1, /*keepdim=*/true);
}

NDArray center_columns(const NDArray& x) {
  return x - mean(x, 0);
}

// ---- 6. speed ----------------------------------------------------------------------------

NDArray naive_matmul(const NDArray& a, const NDArray& b) {
  if (a.ndim() != 2 || b.ndim() != 2 || a.size(1) != b.size(0))
    fail("naive_matmul: needs [M,K] and [K,N] matrices, got {} and {}", a.shape(), b.shape());
  check_same_dtype(a, b, "naive_matmul");
  const Index m = a.size(0), k = a.size(1), n = b.size(1);
  NDArray c = NDArray::zeros({m, n}, a.dtype());
  dispatch_float(a.dtype(), "naive_matmul", [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = c.data<T>();
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < n; ++j) {
        // The inner loop walks a row of A (stride 1) and a column of B (stride n): every
        // step of k jumps n elements in memory, so most loads miss the cache.
        T acc = 0;
        for (Index p = 0; p < k; ++p) acc += pa[i * k + p] * pb[p * n + j];
        pc[i * n + j] = acc;
      }
  });
  return c;
}

double gflops(Index n, double seconds) {
  const double operations = 2.0 * static_cast<double>(n) * static_cast<double>(n) * n;
  return seconds > 0 ? operations / seconds / 1e9 : 0.0;
}

namespace {

// Seconds taken by the fastest of `repeats` calls of f (the fastest run is the one least
// disturbed by the rest of the machine).
template <class F>
double fastest_seconds(int repeats, F f) {
  double best = INFINITY;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, app::seconds_since(start));
  }
  return best;
}

}  // namespace

MatmulTiming time_matmul(Index n, int repeats, Generator& gen) {
  if (n <= 0) fail("time_matmul: the size must be positive, got {}", n);
  NDArray a = NDArray::normal({n, n}, gen), b = NDArray::normal({n, n}, gen);
  NDArray slow, fast;
  MatmulTiming t;
  t.n = n;
  t.naive_seconds = fastest_seconds(repeats, [&] { slow = naive_matmul(a, b); });
  t.library_seconds = fastest_seconds(repeats, [&] { fast = matmul(a, b); });
  t.naive_gflops = gflops(n, t.naive_seconds);
  t.library_gflops = gflops(n, t.library_seconds);
  t.max_difference = max(abs(slow - fast)).item();
  return t;
}

// ---- exercise reference solutions --------------------------------------------------------

NDArray softmax_reference(const NDArray& x, int axis) {
  // Subtracting the maximum changes nothing mathematically (it cancels between numerator
  // and denominator) but keeps exp() from overflowing: exp(1000) is inf in float32.
  NDArray shifted = x - max(x, axis, /*keepdim=*/true);
  NDArray e = exp(shifted);
  return e / sum(e, axis, /*keepdim=*/true);
}

}  // namespace attend::lesson01
