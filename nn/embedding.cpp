#include "nn/embedding.h"

#include "autograd/saved_array.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "tensor/index_ops.h"
#include "tensor/shape_ops.h"

namespace attend::nn {

// y[.., :] = W[ids[..], :]
// dL/dW[v, :] = sum of dL/dy[.., :] over the positions where ids == v (0 for the padding id)
Tensor embedding(const Tensor& ids, const Tensor& weight, Index padding_idx) {
  if (weight.ndim() != 2) fail("embedding: weight must be [num, dim], got {}", weight.shape());
  if (ids.dtype() != kInt64) fail("embedding: ids must be int64, got {}", dtype_name(ids.dtype()));
  const NDArray& id_values = ids.data();
  const std::int64_t* id = id_values.data<std::int64_t>();
  for (Index i = 0; i < id_values.numel(); ++i)
    if (id[i] < 0 || id[i] >= weight.size(0))
      fail("embedding: id {} at position {} of ids {} is outside the table of {} rows (0..{})",
           id[i], i, ids.shape(), weight.size(0), weight.size(0) - 1);
  SavedArray idx(ids.data(), "ids");
  Shape table = weight.shape();
  return make_op("embedding", index_select(weight.data(), 0, ids.data()), {weight},
                 [=](const NDArray& g) -> Grads {
                   NDArray dw = NDArray::zeros(table, g.dtype());
                   index_add_(dw, 0, idx, g);
                   if (padding_idx >= 0) {
                     NDArray zero_row = NDArray::zeros({1, table[1]}, g.dtype());
                     slice_assign(dw, zero_row, 0, padding_idx);
                   }
                   return {dw};
                 });
}

Embedding::Embedding(Index num_embeddings, Index dim, Index padding, Generator& gen)
    : padding_idx(padding) {
  if (padding >= num_embeddings)
    fail("Embedding: padding_idx {} is not below num_embeddings {}", padding, num_embeddings);
  weight = init::normal({num_embeddings, dim}, 1.0, gen);
  if (padding >= 0) {
    NDArray zero_row = NDArray::zeros({1, dim});
    slice_assign(weight.data(), zero_row, 0, padding);
  }
  register_parameter("weight", weight);
}

std::string Embedding::describe() const {
  return fmt::format("Embedding({} x {}{})", weight.size(0), weight.size(1),
                     padding_idx >= 0 ? fmt::format(", padding {}", padding_idx) : "");
}

void tie_weights(Linear& output, const Embedding& embedding) {
  const Shape& out = output.weight.shape();
  const Shape& table = embedding.weight.shape();
  if (out != table)
    fail(
        "tie_weights: the Linear's weight is {} but the Embedding's is {}; an Embedding(V x D) "
        "ties to a Linear(D -> V)",
        out, table);
  if (output.weight.dtype() != embedding.weight.dtype())
    fail("tie_weights: the Linear's weight is {} but the Embedding's is {}",
         dtype_name(output.weight.dtype()), dtype_name(embedding.weight.dtype()));
  // A handle copy: both members now point at one Node. The Linear's registration holds the
  // address of its member, so it sees the shared tensor too.
  output.weight = embedding.weight;
}

}  // namespace attend::nn
