#include "nn/data/data_loader.h"

#include <algorithm>
#include <numeric>
#include <span>

namespace attend::data {

DataLoader::DataLoader(ArrayDataset dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options), generator_(options.seed) {
  if (options_.batch_size < 1)
    fail("DataLoader: batch_size must be at least 1, got {}", options_.batch_size);
  order_.resize(static_cast<std::size_t>(dataset_.size()));
  std::iota(order_.begin(), order_.end(), Index{0});
}

Index DataLoader::size() const {
  const Index n = dataset_.size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  ++epochs_started_;
  if (options_.shuffle) order_ = generator_.permutation(dataset_.size());
  return Iterator(this, 0);
}

Batch DataLoader::batch(Index i) const {
  if (i < 0 || i >= size())
    fail("DataLoader: batch {} is out of range (this loader has {} batches)", i, size());
  const Index start = i * options_.batch_size;
  const Index stop = std::min(start + options_.batch_size, dataset_.size());
  std::span<const Index> positions(order_.data() + start, static_cast<std::size_t>(stop - start));
  return dataset_.batch(positions);
}

DataLoader::Iterator::Iterator(const DataLoader* loader, Index index)
    : loader_(loader), index_(index) {
  load();
}

// The batch is made when the iterator reaches it, so dereferencing twice costs nothing.
void DataLoader::Iterator::load() {
  if (loader_ != nullptr && index_ < loader_->size())
    batch_ = loader_->batch(index_);
  else
    batch_ = Batch{};
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  ++index_;
  load();
  return *this;
}

}  // namespace attend::data
