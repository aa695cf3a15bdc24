// Pairs of token sequences as one padded batch, and the order of an epoch's batches.
//
//   Batch b = seq::make_batch({{7, 8, 9}, {7}}, {{5, 6}, {5}});
//   b.source        [2, 3]  7 8 9 / 7 <pad> <pad>
//   b.decoder_input [2, 3]  <bos> 5 6 / <bos> 5 <pad>   (what teacher forcing feeds)
//   b.target        [2, 3]  5 6 <eos> / 5 <eos> <pad>   (what is predicted)
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tensor.h"
#include "tensor/random.h"

namespace attend::seq {

using TokenIds = std::vector<std::int64_t>;

// B pairs of sequences padded to common lengths S (source) and T (target).
struct Batch {
  Tensor source;         // [B, S] int64, <pad> after each sequence's end
  Tensor source_mask;    // [B, S] float32: 1 for a real token, 0 for padding
  Tensor decoder_input;  // [B, T] int64: <bos> y_1 ... y_{T-1}  (what teacher forcing feeds)
  Tensor target;         // [B, T] int64: y_1 ... y_n <eos>, then <pad>  (what is predicted)
  Index size() const { return source.size(0); }
};

// Pads the sequences (no <bos>/<eos> in them: make_batch adds those to the targets).
// Every source must have at least one token.
Batch make_batch(const std::vector<TokenIds>& sources, const std::vector<TokenIds>& targets);

// Batches of example indices for one epoch, as Bahdanau et al. (2015, section 4.2) make
// them: shuffle, take pools of `pool_batches` batches, sort each pool by length, cut it
// into batches and shuffle the batches. Padding is then small and the encoder runs fewer
// steps, while every batch is still a random sample of the data.
std::vector<std::vector<std::size_t>> length_sorted_batches(const std::vector<Index>& lengths,
                                                            Index batch_size, Generator& gen,
                                                            Index pool_batches = 20);

}  // namespace attend::seq
