#include "tensor/matmul.h"

#include "tensor/gemm.h"
#include "tensor/parallel.h"

namespace attend {
namespace {

std::string describe(const NDArray& x, bool transposed) {
  return fmt::format("{}{}", x.shape(), transposed ? "^T" : "");
}

Shape batch_shape(const Shape& s) {
  Shape batch;
  for (int d = 0; d + 2 < s.ndim(); ++d) batch.push_back(s[d]);
  return batch;
}

// Offset (in matrices) of batch entry `flat` of `out_batch` inside an input whose batch
// shape is `in_batch` (broadcast: its size-1 axes repeat).
Index batch_offset(Index flat, const Shape& out_batch, const Shape& in_batch) {
  Index offset = 0, in_stride = 1;
  const int shift = out_batch.ndim() - in_batch.ndim();
  for (int d = out_batch.ndim() - 1; d >= 0; --d) {
    const Index index = flat % out_batch[d];
    flat /= out_batch[d];
    const int di = d - shift;
    if (di < 0) continue;
    if (in_batch[di] != 1) offset += index * in_stride;
    in_stride *= in_batch[di];
  }
  return offset;
}

}  // namespace

NDArray matmul(const NDArray& a, const NDArray& b, bool transpose_a, bool transpose_b) {
  check_defined(a, "matmul", "first input");
  check_defined(b, "matmul", "second input");
  if (a.ndim() < 2 || b.ndim() < 2)
    fail(
        "matmul: {} @ {}: both inputs need at least 2 dimensions (reshape a vector to [1,n] "
        "or [n,1])",
        describe(a, transpose_a), describe(b, transpose_b));
  check_same_dtype(a, b, "matmul");
  const Index a_rows = a.shape()[a.ndim() - 2], a_cols = a.shape()[a.ndim() - 1];
  const Index b_rows = b.shape()[b.ndim() - 2], b_cols = b.shape()[b.ndim() - 1];
  GemmShape g;
  g.m = transpose_a ? a_cols : a_rows;
  g.k = transpose_a ? a_rows : a_cols;
  const Index k_b = transpose_b ? b_cols : b_rows;
  g.n = transpose_b ? b_rows : b_cols;
  g.transpose_a = transpose_a;
  g.transpose_b = transpose_b;
  if (g.k != k_b)
    fail("matmul: {} @ {}: inner dimensions {} and {} differ", describe(a, transpose_a),
         describe(b, transpose_b), g.k, k_b);

  const Shape a_batch = batch_shape(a.shape()), b_batch = batch_shape(b.shape());
  Shape out_shape = broadcast_shapes(a_batch, b_batch, "matmul (batch dimensions)");
  const Shape out_batch = out_shape;
  out_shape.push_back(g.m);
  out_shape.push_back(g.n);
  NDArray out = NDArray::empty(out_shape, a.dtype());

  dispatch_float(a.dtype(), "matmul", [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    if (b.ndim() == 2 && !transpose_a) {
      // One matrix on the right: stack every batch entry of a into one tall matrix and do a
      // single large product (a Linear layer on [B, T, D] inputs takes this path).
      GemmShape tall = g;
      tall.m = g.m * out_batch.numel();
      gemm(tall, pa, a_cols, pb, b_cols, pc, g.n);
      return;
    }
    const Index a_size = a_rows * a_cols, b_size = b_rows * b_cols, c_size = g.m * g.n;
    for (Index i = 0; i < out_batch.numel(); ++i) {
      const T* ai = pa + batch_offset(i, out_batch, a_batch) * a_size;
      const T* bi = pb + batch_offset(i, out_batch, b_batch) * b_size;
      gemm(g, ai, a_cols, bi, b_cols, pc + i * c_size, g.n);
    }
  });
  return out;
}

// Below this many multiply-adds a product takes well under a microsecond (it skips packing,
// see gemm_uses_small_loops): about what handing it to the other thread costs.
constexpr Index kSideBySideWork = Index{1} << 14;

void run_two_products(Index work, const std::function<void()>& first,
                      const std::function<void()>& second) {
  if (work >= kSideBySideWork) {
    run_both(first, second);
  } else {
    first();
    second();
  }
}

}  // namespace attend
