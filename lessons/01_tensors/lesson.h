// Lesson 01: tensors. The functions that main.cpp runs, in the order of the chapter
// (docs/01_tensors.md):
//
//   1. shape           what an array is: sizes, dtype, number of elements, bytes
//   2. memory layout   row-major offsets and strides; reshape shares memory, clone and
//                      transpose copy
//   3. broadcasting    the rules, a row added to every row, an outer product, an error
//   4. reductions      sum / mean / max over an axis, and why keepdim exists
//   5. matmul          2-D, batched with a broadcast batch axis, the shape error
//   6. speed           a naive triple loop against matmul (an illustration; bench/ measures)
//
// Everything here is a small function of NDArrays, so the tests in tests/lessons/01/ can
// check each value, shape and error message that the program prints.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson01 {

// ---- 2. memory layout --------------------------------------------------------------------

// Offset of element `index` in a row-major array of `shape`:
//   offset = index[0]*stride[0] + index[1]*stride[1] + ...,
// with stride[last] = 1 and stride[d] = stride[d+1] * shape[d+1]. Checks the index.
Index row_major_offset(const Shape& shape, std::span<const Index> index);
Index row_major_offset(const Shape& shape, std::initializer_list<Index> index);

// The row-major strides of `shape` as a printable list: [2,3,4] -> [12,4,1].
std::vector<Index> strides_of(const Shape& shape);

// The strides a transpose would have if it were a *view* of x's memory (the way NumPy and
// PyTorch do it): x's strides with the last two swapped. attend copies instead.
std::vector<Index> transposed_view_strides(const Shape& shape);

// ---- 3. broadcasting ---------------------------------------------------------------------

// The shape that a and b broadcast to, or the error message when they cannot.
struct BroadcastResult {
  Shape a, b;
  bool ok = false;
  Shape shape;        // when ok
  std::string error;  // when not
};
BroadcastResult broadcast_result(const Shape& a, const Shape& b);

// The table that section 3 prints (and exercise 1 asks you to predict).
std::vector<BroadcastResult> broadcast_table();

// column [n] and row [m] -> [n, m] with out[i, j] = column[i] * row[j], by broadcasting
// [n, 1] * [1, m]: no loop, no copy of the inputs.
NDArray outer_product(const NDArray& column, const NDArray& row);

// ---- 4. reductions -----------------------------------------------------------------------

// Each row divided by its sum, so every row sums to 1. Needs keepdim: sum over axis 1 of
// a [n, m] array is [n], which does not broadcast against [n, m]; [n, 1] does.
NDArray normalize_rows(const NDArray& x);

// Each column minus its mean. No keepdim needed: the mean over axis 0 is [m], which
// broadcasts against [n, m] as a row.
NDArray center_columns(const NDArray& x);

// ---- 6. speed ----------------------------------------------------------------------------

// C = A B for 2-D A [M,K] and B [K,N], as three nested loops over i, j, k: the textbook
// definition C[i,j] = sum_k A[i,k] B[k,j]. Correct, and slow (see time_matmul).
NDArray naive_matmul(const NDArray& a, const NDArray& b);

// A product of two n x n matrices costs 2 n^3 floating-point operations (n^3 multiplies
// and n^3 adds). Returns billions of those per second.
double gflops(Index n, double seconds);

struct MatmulTiming {
  Index n = 0;
  double naive_seconds = 0, library_seconds = 0;  // the fastest of the repeats
  double naive_gflops = 0, library_gflops = 0;
  double max_difference = 0;  // largest |naive - matmul| over the elements
};
// Times naive_matmul and matmul on the same random float32 n x n matrices, keeping the
// fastest of `repeats` runs of each.
MatmulTiming time_matmul(Index n, int repeats, Generator& gen);

// ---- exercise reference solutions (tests/lessons/01/test_exercises.cpp checks them) -------

// Exercise 3: softmax along `axis` built from max, exp, sum and div with keepdim:
//   softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j.
NDArray softmax_reference(const NDArray& x, int axis);

}  // namespace attend::lesson01
