// The elementwise part of a GRU step as ONE autograd op. From the input's part of the gates
// gi = W_ih x + b_ih [B, 3H], the state's part gh = W_hh h + b_hh [B, 3H] and the state
// h [B, H] (nn/gru.h has the formulas):
//
//   r = sigmoid(gi_r + gh_r),  z = sigmoid(gi_z + gh_z),  n = tanh(gi_n + r gh_n)
//   h' = (1 - z) n + z h
//
// Composed from ops, one step was 6 slices (chunk), 4 adds, 3 multiplies, 2 sigmoids, a tanh
// and a subtraction: 17 graph nodes, each with its own arrays and backward call, and the
// slices' backward allocated a zero [B, 3H] array each. Here it is one node, one pass over
// each row forward and one backward; the two products (W_ih x, W_hh h) stay GEMMs outside.
//
// Same bits as the composed graph, forward and all three gradients, in float32 and float64
// (nn/gru_gates.cpp says how; tests/nn/layers/test_gru_gates.cpp checks it bit for bit).
#pragma once

#include "autograd/tensor.h"

namespace attend::nn {

// gi [B, 3H], gh [B, 3H], h [B, H] -> h' [B, H]
Tensor gru_gates(const Tensor& gi, const Tensor& gh, const Tensor& h);

}  // namespace attend::nn
