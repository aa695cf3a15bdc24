// DataLoader: goes through an ArrayDataset in batches, one epoch per loop.
//
//   DataLoader loader(ArrayDataset(images, labels), {.batch_size = 64, .shuffle = true});
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (const Batch& batch : loader) {          // each loop is one epoch
//       Tensor loss = cross_entropy(model(batch.inputs), batch.targets);
//       ...
//     }
//
// With shuffle on, every epoch visits the samples in a new random order drawn from the
// loader's own Generator, seeded from the options: the same seed gives the same orders in
// every run, and nothing else in the program (weight initialisation, dropout) moves them.
// Every sample appears exactly once per epoch; the last batch is smaller when the batch
// size does not divide the dataset, unless drop_last leaves it out.
//
// To resume a run at the start of an epoch, save generator().state() (for example as the
// TrainingState::rng of a checkpoint) and give it back with generator().set_state().
#pragma once

#include <cstdint>
#include <iterator>
#include <vector>

#include "nn/data/dataset.h"
#include "tensor/random.h"

namespace attend::data {

struct DataLoaderOptions {
  Index batch_size = 32;
  bool shuffle = false;
  std::uint64_t seed = 0;  // seeds the shuffling generator
  bool drop_last = false;  // leave out the last batch if it is smaller than batch_size
};

class DataLoader {
 public:
  DataLoader(ArrayDataset dataset, DataLoaderOptions options = {});

  // Batches per epoch.
  Index size() const;
  Index batch_size() const { return options_.batch_size; }
  const ArrayDataset& dataset() const { return dataset_; }
  // The epochs begun so far (each begin() starts one).
  std::int64_t epochs_started() const { return epochs_started_; }
  // The generator that draws the orders.
  Generator& generator() { return generator_; }

  // Iterating: begin() starts a new epoch (drawing a new order when shuffling), so a loader
  // runs one pass at a time. Dereferencing gives the current batch.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = const Batch*;
    using reference = const Batch&;

    Iterator() = default;
    const Batch& operator*() const { return batch_; }
    const Batch* operator->() const { return &batch_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    friend class DataLoader;
    Iterator(const DataLoader* loader, Index index);
    void load();
    const DataLoader* loader_ = nullptr;
    Index index_ = 0;
    Batch batch_;
  };
  Iterator begin();
  Iterator end() const { return Iterator(nullptr, size()); }

  // Batch i (0..size()-1) of the current epoch's order; begin() does not have to be called.
  Batch batch(Index i) const;
  // The current epoch's order of the samples.
  const std::vector<Index>& order() const { return order_; }

 private:
  ArrayDataset dataset_;
  DataLoaderOptions options_;
  Generator generator_;
  std::vector<Index> order_;
  std::int64_t epochs_started_ = 0;
};

}  // namespace attend::data
