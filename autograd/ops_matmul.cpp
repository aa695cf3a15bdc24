// The matrix product and its two gradients, each itself a matrix product:
//   C = A B      (A is [M,K], B is [K,N])
//   dL/dA = dL/dC B^T     [M,N] @ [N,K] -> [M,K]
//   dL/dB = A^T dL/dC     [K,M] @ [M,N] -> [K,N]
// The transposes are read in place by the GEMM kernel, never copied. Batch dimensions that
// were broadcast are summed back, as for elementwise ops.
#include "autograd/ops.h"
#include "autograd/saved_array.h"
#include "tensor/matmul.h"
#include "tensor/reduce.h"

namespace attend {

Tensor matmul(const Tensor& a, const Tensor& b) {
  SavedArray av(a.data(), "input #0"), bv(b.data(), "input #1");
  bool da = a.requires_grad(), db = b.requires_grad();
  return make_op("matmul", matmul(a.data(), b.data()), {a, b}, [=](const NDArray& g) -> Grads {
    NDArray ga, gb;
    auto grad_a = [&] { ga = sum_to(matmul(g, bv, false, true), av.shape()); };
    auto grad_b = [&] {
      if (bv.ndim() == 2) {
        // One B shared by the whole batch: stack the batch into rows, one product.
        const Index k = av.size(-1), n = g.size(-1);
        gb = matmul(av.get().reshape({-1, k}), g.reshape({-1, n}), true, false);
      } else {
        gb = sum_to(matmul(av, g, true, false), bv.shape());
      }
    };
    if (da && db) {
      run_two_products(g.numel() * av.size(-1), grad_a, grad_b);  // each M N K multiply-adds
    } else if (da) {
      grad_a();
    } else if (db) {
      grad_b();
    }
    return {ga, gb};
  });
}

}  // namespace attend
