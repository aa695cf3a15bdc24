// QueryPooling: a module of your own, written on attend's public API only.
//
// It summarises a set of N vectors by Q learned queries (Lee et al. 2019, Set Transformer,
// "pooling by multihead attention", with one head): each query scores every element with a
// scaled dot product and takes the weighted sum of their values,
//
//   keys    K = X W_K          [B, N, Dk]     values V = X W_V   [B, N, Dv]
//   weights A = softmax(S K^T / sqrt(Dk))     [B, Q, N]   (Vaswani et al. 2017, eq. 1)
//   context C = A V                           [B, Q, Dv]
//
// where S [Q, Dk] are the queries, parameters like W_K and W_V. Unlike a mean over the set,
// each query can pick out the elements it needs, and the weights A show which ones it picked.
#pragma once

#include "attend.h"

namespace own_model {

using attend::Index;
using attend::Tensor;

struct Pooled {
  Tensor context;  // [B, Q, Dv]
  Tensor weights;  // [B, Q, N], each row sums to 1
};

class QueryPooling : public attend::nn::Module {
 public:
  QueryPooling(Index features, Index queries, Index key_size, Index value_size,
               attend::Generator& gen);
  // set [B, N, features] -> context [B, Q, Dv] and the weights [B, Q, N].
  Pooled forward(const Tensor& set);
  std::string describe() const override;

  Tensor queries;            // S [Q, Dk]
  attend::nn::Linear key;    // W_K: [features] -> [Dk], no bias
  attend::nn::Linear value;  // W_V: [features] -> [Dv], with bias
};

}  // namespace own_model
