// ArrayDataset: a dataset held in memory as two arrays, inputs [N, ...] and targets [N] or
// [N, ...], where row i of each is sample i. Fashion-MNIST, for example, is images
// [60000, 1, 28, 28] and labels [60000]. A DataLoader (nn/data/data_loader.h) cuts it into
// batches.
#pragma once

#include <span>

#include "autograd/tensor.h"

namespace attend::data {

// Some samples: their inputs and targets, stacked along a new first axis. Batches are data,
// not parameters, so neither tensor requires a gradient.
struct Batch {
  Tensor inputs;
  Tensor targets;
  Index size() const { return inputs.size(0); }
};

class ArrayDataset {
 public:
  // Both arrays must have at least one axis and the same size N along it. They are shared,
  // not copied (NDArray copies share memory).
  ArrayDataset(NDArray inputs, NDArray targets);

  Index size() const { return inputs_.size(0); }
  const NDArray& inputs() const { return inputs_; }
  const NDArray& targets() const { return targets_; }

  // The samples at `positions`, in that order (each in 0..size()-1).
  Batch batch(std::span<const Index> positions) const;
  // Samples begin..end-1 in order.
  Batch range(Index begin, Index end) const;

 private:
  NDArray inputs_;
  NDArray targets_;
};

}  // namespace attend::data
