// GRU: the gated recurrent unit (Cho et al. 2014), in PyTorch's formulation. One step turns
// the input x [B, I] and the previous state h [B, H] into the next state:
//
//   r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)          reset gate
//   z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)          update gate
//   n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))       candidate state
//   h' = (1 - z) * n + z * h
//
// z decides how much of the old state to keep; r how much of it the candidate may see.
// The two products are Linears (GEMMs); the gates and h' are one op, gru_gates
// (nn/gru_gates.h), whose backward is written next to its forward: the same numbers as
// composing sigmoid, tanh, mul and add, in one pass instead of 17 graph nodes per step.
//
// The weights are stacked as in PyTorch: weight_ih = [W_ir; W_iz; W_in] [3H, I],
// weight_hh = [W_hr; W_hz; W_hn] [3H, H], bias_ih = [b_ir; b_iz; b_in] [3H], bias_hh [3H].
// Initialisation (PyTorch's default): all four ~ U(-1/sqrt(H), 1/sqrt(H)).
//
// GRU unrolls a GRUCell over a sequence (and a second one backwards if bidirectional). Its
// parameters are the cells': "forward.weight_ih", ..., "backward.bias_hh". Shapes, padding
// masks and the direction layout are described in nn/rnn.h.
#pragma once

#include <memory>

#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

class GRUCell : public Module {
 public:
  GRUCell(Index input_size, Index hidden_size, Generator& gen = default_generator());
  // x [B, I], h [B, H] -> h' [B, H]
  Tensor forward(const Tensor& x, const Tensor& h);
  Tensor operator()(const Tensor& x, const Tensor& h) { return forward(x, h); }
  // The same step given the input's part of the gates, gi = W_ih x + b_ih [B, 3H], already
  // computed (GRU computes it for every step at once).
  Tensor step(const Tensor& gi, const Tensor& h);
  std::string describe() const override;
  Index input_size() const { return weight_ih.size(1); }
  Index hidden_size() const { return weight_hh.size(1); }

  Tensor weight_ih;  // [3H, I]
  Tensor weight_hh;  // [3H, H]
  Tensor bias_ih;    // [3H]
  Tensor bias_hh;    // [3H]
};

struct GRUOutput {
  Tensor output;  // [B, T, D*H]: the state after every step (0 at padded steps)
  // [D, B, H]: each direction's final state. h_n[1], the backward direction's state at the
  // first token, is the h_bwd_1 that Bahdanau et al. (2015) use to start the decoder.
  Tensor h_n;
};

class GRU : public Module {
 public:
  GRU(Index input_size, Index hidden_size, bool bidirectional = false,
      Generator& gen = default_generator());
  // x [B, T, I]; h0 [D, B, H] or undefined (zeros); mask [B, T] or undefined (no padding).
  GRUOutput forward(const Tensor& x, const Tensor& h0 = Tensor(), const Tensor& mask = Tensor());
  GRUOutput operator()(const Tensor& x, const Tensor& h0 = Tensor(),
                       const Tensor& mask = Tensor()) {
    return forward(x, h0, mask);
  }
  std::string describe() const override;
  Index directions() const { return backward_cell ? 2 : 1; }

  GRUCell forward_cell;                    // registered as "forward"
  std::unique_ptr<GRUCell> backward_cell;  // "backward"; null unless bidirectional
};

}  // namespace attend::nn
