// The additive (Bahdanau) attention score as ONE autograd op:
//
//   scores [B, Tq, Tk] = sum over a of v_a tanh(qp[b, i, a] + kp[b, j, a])
//
// from the projected queries qp [B, Tq, A] (W q), the projected keys kp [B, Tk, A] (U k + b)
// and v [1, A] (the weight of the Linear A -> 1 that AdditiveScore calls to_score).
//
// The composed path, squeeze(to_score(tanh(unsqueeze(qp, 2) + unsqueeze(kp, 1))), 3), makes
// a broadcast [B, Tq, Tk, A] sum, a tanh of it, and puts that through a GEMM with ONE output
// column (which the kernel computes as a 32-column sliver); its backward is a GEMM with
// k = 1, tanh's backward, two sums to shape and a GEMM for the weight gradient. Here each
// (batch, query) row is one loop over contiguous keys and one over a, and the backward is one
// pass over the saved tanh.
//
// Same bits as the composed path, forward and all three gradients, in float32 and float64:
// every sum is taken in the order the composed ops take it (nn/additive_score.cpp says which;
// tests/nn/attention/test_additive_score.cpp checks it bit for bit).
#pragma once

#include "autograd/tensor.h"

namespace attend::nn {

Tensor additive_score(const Tensor& qp, const Tensor& kp, const Tensor& v);

}  // namespace attend::nn
