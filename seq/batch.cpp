// Padded batches with masks, and the order of an epoch's batches.
#include <algorithm>

#include "seq/batch.h"

#include "nn/data/vocabulary.h"
#include "tensor/error.h"

namespace attend::seq {

using data::Vocabulary;

Batch make_batch(const std::vector<TokenIds>& sources, const std::vector<TokenIds>& targets) {
  if (sources.empty() || sources.size() != targets.size())
    fail("make_batch: {} sources and {} targets (need the same number, at least one)",
         sources.size(), targets.size());
  std::vector<TokenIds> inputs, outputs;
  for (std::size_t b = 0; b < sources.size(); ++b) {
    if (sources[b].empty()) fail("make_batch: source {} is empty", b);
    TokenIds input = {Vocabulary::kBos}, output = targets[b];
    input.insert(input.end(), targets[b].begin(), targets[b].end());  // <bos> y_1 ... y_n
    output.push_back(Vocabulary::kEos);                               // y_1 ... y_n <eos>
    inputs.push_back(std::move(input));
    outputs.push_back(std::move(output));
  }
  Batch batch;
  NDArray source = data::pad_sequences(sources);
  NDArray mask = NDArray::zeros(source.shape());
  const std::int64_t* id = source.data<std::int64_t>();
  float* keep = mask.data<float>();
  for (Index i = 0; i < source.numel(); ++i) keep[i] = id[i] != Vocabulary::kPad ? 1.0f : 0.0f;
  batch.source = Tensor(source);
  batch.source_mask = Tensor(mask);
  batch.decoder_input = Tensor(data::pad_sequences(inputs));
  batch.target = Tensor(data::pad_sequences(outputs));
  return batch;
}

std::vector<std::vector<std::size_t>> length_sorted_batches(const std::vector<Index>& lengths,
                                                            Index batch_size, Generator& gen,
                                                            Index pool_batches) {
  if (batch_size < 1 || pool_batches < 1)
    fail("length_sorted_batches: batch size {} and pool {} must be positive", batch_size,
         pool_batches);
  const std::vector<Index> order = gen.permutation(static_cast<Index>(lengths.size()));
  const std::size_t pool_size = static_cast<std::size_t>(batch_size * pool_batches);
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < order.size(); start += pool_size) {
    std::vector<std::size_t> pool(
        order.begin() + static_cast<std::ptrdiff_t>(start),
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + pool_size)));
    // stable: equal lengths keep their shuffled order, so the result depends only on gen
    std::stable_sort(pool.begin(), pool.end(),
                     [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
    for (std::size_t b = 0; b < pool.size(); b += static_cast<std::size_t>(batch_size))
      batches.emplace_back(
          pool.begin() + static_cast<std::ptrdiff_t>(b),
          pool.begin() + static_cast<std::ptrdiff_t>(
                             std::min(pool.size(), b + static_cast<std::size_t>(batch_size))));
  }
  std::vector<std::vector<std::size_t>> shuffled;
  for (Index i : gen.permutation(static_cast<Index>(batches.size())))
    shuffled.push_back(std::move(batches[static_cast<std::size_t>(i)]));
  return shuffled;
}

}  // namespace attend::seq
