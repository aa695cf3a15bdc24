// Indexing ops. Their backward adds each output gradient back into the position it was
// read from; a position read twice (the same token twice in a sentence) receives the sum.
#include "autograd/ops.h"
#include "autograd/saved_array.h"
#include "tensor/index_ops.h"

namespace attend {

// y[.., j, ..] = x[.., index[j], ..].  dL/dx[.., i, ..] = sum over j with index[j] = i of dL/dy[..,
// j, ..]
Tensor index_select(const Tensor& x, int axis, const Tensor& index) {
  Shape s = x.shape();
  SavedArray idx(index.data(), "index");
  return make_op("index_select", index_select(x.data(), axis, index.data()), {x},
                 [=](const NDArray& g) -> Grads {
                   NDArray dx = NDArray::zeros(s, g.dtype());
                   index_add_(dx, axis, idx, g);
                   return {dx};
                 });
}

// y[o, j, i] = x[o, index[o, j, i], i].  dL/dx[o, k, i] = sum over j with index[o, j, i] = k of
// dL/dy[o, j, i]
Tensor gather(const Tensor& x, int axis, const Tensor& index) {
  Shape s = x.shape();
  SavedArray idx(index.data(), "index");
  return make_op("gather", gather(x.data(), axis, index.data()), {x},
                 [=](const NDArray& g) -> Grads {
                   NDArray dx = NDArray::zeros(s, g.dtype());
                   scatter_add_(dx, axis, idx, g);
                   return {dx};
                 });
}

}  // namespace attend
