// Embedding: a table of vectors, one per token id; y[..] = W[ids[..]].
//
// A padding id (for sequences padded to a common length) may be given: its row starts at
// zero and never receives a gradient, so padding stays a zero vector.
// Initialisation (PyTorch's default): W ~ N(0, 1).
#pragma once

#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

constexpr Index kNoPadding = -1;

// The op behind Embedding: ids is int64 of any shape; the result is ids.shape + [dim].
Tensor embedding(const Tensor& ids, const Tensor& weight, Index padding_idx = kNoPadding);

class Embedding : public Module {
 public:
  Embedding(Index num_embeddings, Index dim, Index padding_idx = kNoPadding,
            Generator& gen = default_generator());
  Tensor forward(const Tensor& ids) { return embedding(ids, weight, padding_idx); }
  Tensor operator()(const Tensor& ids) { return forward(ids); }
  std::string describe() const override;

  Tensor weight;  // [num_embeddings, dim]
  Index padding_idx;
};

class Linear;

// Weight tying (Press & Wolf 2017; Vaswani et al. 2017, section 3.4; GPT-2): the output
// layer that scores the V tokens reuses the embedding table, so output.weight [V, D] becomes
// the very tensor embedding.weight [V, D] (PyTorch: out.weight = emb.weight). It is then
// one parameter: its gradient sums both uses, and named_parameters() lists it once, under
// whichever module is registered first. The output keeps its own bias.
void tie_weights(Linear& output, const Embedding& embedding);

}  // namespace attend::nn
