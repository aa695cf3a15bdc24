// LSTM: long short-term memory (Hochreiter and Schmidhuber 1997, with the forget gate of
// Gers et al. 2000), in PyTorch's formulation. The state is a pair: the hidden state h [B, H]
// and the cell c [B, H]. One step, from input x [B, I]:
//
//   i  = sigmoid(W_ii x + b_ii + W_hi h + b_hi)      input gate
//   f  = sigmoid(W_if x + b_if + W_hf h + b_hf)      forget gate
//   g  = tanh(W_ig x + b_ig + W_hg h + b_hg)         candidate cell
//   o  = sigmoid(W_io x + b_io + W_ho h + b_ho)      output gate
//   c' = f * c + i * g
//   h' = o * tanh(c')
//
// The cell is updated by addition, so gradients can flow along it over many steps. Composed
// from differentiable ops: no backward of its own.
//
// The weights are stacked in the order i, f, g, o as in PyTorch: weight_ih [4H, I],
// weight_hh [4H, H], bias_ih [4H], bias_hh [4H]. Initialisation (PyTorch's default): all
// four ~ U(-1/sqrt(H), 1/sqrt(H)).
//
// LSTM unrolls an LSTMCell over a sequence (and a second one backwards if bidirectional).
// Its parameters are the cells': "forward.weight_ih", ..., "backward.bias_hh". Shapes,
// padding masks and the direction layout are described in nn/rnn.h.
#pragma once

#include <memory>

#include "nn/module.h"
#include "tensor/random.h"

namespace attend::nn {

// (h, c): [B, H] each for a cell; [D, B, H] each for an LSTM's initial and final states.
struct LSTMState {
  Tensor h;
  Tensor c;
};

class LSTMCell : public Module {
 public:
  LSTMCell(Index input_size, Index hidden_size, Generator& gen = default_generator());
  // x [B, I], state (h, c) [B, H] each -> (h', c')
  LSTMState forward(const Tensor& x, const LSTMState& state);
  LSTMState operator()(const Tensor& x, const LSTMState& state) { return forward(x, state); }
  // The same step given the input's part of the gates, gi = W_ih x + b_ih [B, 4H].
  LSTMState step(const Tensor& gi, const LSTMState& state);
  std::string describe() const override;
  Index input_size() const { return weight_ih.size(1); }
  Index hidden_size() const { return weight_hh.size(1); }

  Tensor weight_ih;  // [4H, I]
  Tensor weight_hh;  // [4H, H]
  Tensor bias_ih;    // [4H]
  Tensor bias_hh;    // [4H]
};

struct LSTMOutput {
  Tensor output;  // [B, T, D*H]: the hidden state after every step (0 at padded steps)
  Tensor h_n;     // [D, B, H]: each direction's final hidden state
  Tensor c_n;     // [D, B, H]: each direction's final cell
};

class LSTM : public Module {
 public:
  LSTM(Index input_size, Index hidden_size, bool bidirectional = false,
       Generator& gen = default_generator());
  // x [B, T, I]; initial (h0, c0) [D, B, H] each, either undefined for zeros; mask [B, T] or
  // undefined (no padding).
  LSTMOutput forward(const Tensor& x, const LSTMState& initial = {}, const Tensor& mask = Tensor());
  LSTMOutput operator()(const Tensor& x, const LSTMState& initial = {},
                        const Tensor& mask = Tensor()) {
    return forward(x, initial, mask);
  }
  std::string describe() const override;
  Index directions() const { return backward_cell ? 2 : 1; }

  LSTMCell forward_cell;                    // registered as "forward"
  std::unique_ptr<LSTMCell> backward_cell;  // "backward"; null unless bidirectional
};

}  // namespace attend::nn
