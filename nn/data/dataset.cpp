#include "nn/data/dataset.h"

#include <numeric>
#include <vector>

#include "tensor/index_ops.h"

namespace attend::data {

ArrayDataset::ArrayDataset(NDArray inputs, NDArray targets)
    : inputs_(std::move(inputs)), targets_(std::move(targets)) {
  check_defined(inputs_, "ArrayDataset", "inputs");
  check_defined(targets_, "ArrayDataset", "targets");
  if (inputs_.ndim() == 0 || targets_.ndim() == 0)
    fail("ArrayDataset: inputs {} and targets {} need a first axis that counts the samples",
         inputs_.shape(), targets_.shape());
  if (inputs_.size(0) != targets_.size(0))
    fail("ArrayDataset: inputs {} and targets {} have different numbers of samples ({} and {})",
         inputs_.shape(), targets_.shape(), inputs_.size(0), targets_.size(0));
}

Batch ArrayDataset::batch(std::span<const Index> positions) const {
  // index_select checks every position against the dataset's size.
  NDArray index = NDArray::from_vector(positions, Shape{static_cast<Index>(positions.size())});
  return {Tensor(index_select(inputs_, 0, index)), Tensor(index_select(targets_, 0, index))};
}

Batch ArrayDataset::range(Index begin, Index end) const {
  if (begin < 0 || begin > end || end > size())
    fail("ArrayDataset::range: [{}, {}) is not a range of samples of a dataset of {}", begin, end,
         size());
  std::vector<Index> positions(static_cast<std::size_t>(end - begin));
  std::iota(positions.begin(), positions.end(), begin);
  return batch(positions);
}

}  // namespace attend::data
