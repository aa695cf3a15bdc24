// The pieces shared by the unrolled recurrent layers GRU (nn/gru.h) and LSTM (nn/lstm.h).
//
// Conventions (PyTorch's, with batch_first = true):
//   x       [B, T, I]      B sequences of T steps, I features per step
//   mask    [B, T]         optional: 1 for a real token, 0 for padding
//   h0, h_n [D, B, H]      a state per direction; D = 2 when bidirectional (0 forward,
//                          1 backward), else 1
//   output  [B, T, D*H]    the state after every step, the directions concatenated on the last
//                          axis: h_t = [h_fwd_t; h_bwd_t] (Bahdanau et al. 2015, eq. 7)
//
// Padding. At a step where mask = 0 a direction skips the input: its state is carried over
// unchanged, and the output there is 0. So the forward direction's final state is its state
// at the sequence's last real token, and the backward direction starts from h0 at that
// token: a padded sequence gives, on its real steps, exactly what it gives alone.
#pragma once

#include <string_view>
#include <vector>

#include "autograd/tensor.h"

namespace attend::nn::rnn {

// Checks that x is [B, T, input_size] with B, T >= 1, of the parameters' dtype ("GRU: input
// ..." on error).
void check_sequence(const Tensor& x, Index input_size, DType parameters, std::string_view layer);

// The T steps of x [B, T, ...] as T tensors [B, ...], differentiable.
std::vector<Tensor> split_time_steps(const Tensor& x);

// Column t of the mask as a [B, 1] tensor of the given dtype, for t = 0 .. T-1; an empty list
// when mask is undefined. The mask must be [B, T] and hold only 0 and 1 (any dtype).
std::vector<Tensor> step_masks(const Tensor& mask, Index batch, Index steps, DType dtype,
                               std::string_view layer);

// The [B, H] initial state of `direction` out of states [D, B, H] (named `what` in errors),
// or zeros of `dtype` when states is undefined.
Tensor initial_state(const Tensor& states, Index direction, Index directions, Index batch,
                     Index hidden, DType dtype, std::string_view layer, std::string_view what);

// Each direction's states [B, T, H] concatenated on the last axis, and zeroed at padded steps
// when a mask is given.
Tensor join_outputs(const std::vector<Tensor>& per_direction, const Tensor& mask);

}  // namespace attend::nn::rnn
