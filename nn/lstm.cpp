#include "nn/lstm.h"

#include "autograd/ops.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/rnn.h"

namespace attend::nn {

LSTMCell::LSTMCell(Index input_size, Index hidden_size, Generator& gen) {
  if (input_size < 1 || hidden_size < 1)
    fail("LSTMCell: input and hidden sizes must be positive, got {} and {}", input_size,
         hidden_size);
  const double bound = init::fan_in_bound(hidden_size);  // 1/sqrt(H) for all four
  weight_ih = init::uniform({4 * hidden_size, input_size}, bound, gen);
  weight_hh = init::uniform({4 * hidden_size, hidden_size}, bound, gen);
  bias_ih = init::uniform({4 * hidden_size}, bound, gen);
  bias_hh = init::uniform({4 * hidden_size}, bound, gen);
  register_parameter("weight_ih", weight_ih);
  register_parameter("weight_hh", weight_hh);
  register_parameter("bias_ih", bias_ih);
  register_parameter("bias_hh", bias_hh);
}

LSTMState LSTMCell::forward(const Tensor& x, const LSTMState& state) {
  if (!x.defined() || !state.h.defined() || !state.c.defined())
    fail("LSTMCell: the input, the hidden state or the cell is undefined");
  const Shape expected{x.ndim() == 2 ? x.size(0) : 0, hidden_size()};
  if (x.ndim() != 2 || x.size(1) != input_size() || state.h.shape() != expected ||
      state.c.shape() != expected)
    fail("LSTMCell: input {} must be [B, {}], hidden state {} and cell {} [B, {}], same B",
         x.shape(), input_size(), state.h.shape(), state.c.shape(), hidden_size());
  return step(linear(x, weight_ih, bias_ih), state);
}

LSTMState LSTMCell::step(const Tensor& gi, const LSTMState& state) {
  if (!gi.defined() || !state.h.defined() || !state.c.defined())
    fail("LSTMCell::step: the gates, the hidden state or the cell is undefined");
  const Index H = hidden_size();
  const Shape expected{gi.ndim() == 2 ? gi.size(0) : 0, H};
  if (gi.ndim() != 2 || gi.size(1) != 4 * H || state.h.shape() != expected ||
      state.c.shape() != expected)
    fail("LSTMCell::step: gates {} must be [B, {}], hidden state {} and cell {} [B, {}], same B",
         gi.shape(), 4 * H, state.h.shape(), state.c.shape(), H);
  // All four gates' pre-activations at once: W_ih x + b_ih + W_hh h + b_hh [B, 4H]
  std::vector<Tensor> gates = chunk(gi + linear(state.h, weight_hh, bias_hh), 4, -1);
  Tensor i = sigmoid(gates[0]);  // input gate
  Tensor f = sigmoid(gates[1]);  // forget gate
  Tensor g = tanh(gates[2]);     // candidate cell
  Tensor o = sigmoid(gates[3]);  // output gate
  Tensor c = f * state.c + i * g;
  return {o * tanh(c), c};
}

std::string LSTMCell::describe() const {
  return fmt::format("LSTMCell({} -> {})", input_size(), hidden_size());
}

LSTM::LSTM(Index input_size, Index hidden_size, bool bidirectional, Generator& gen)
    : forward_cell(input_size, hidden_size, gen) {
  register_module("forward", forward_cell);
  if (bidirectional) {
    backward_cell = std::make_unique<LSTMCell>(input_size, hidden_size, gen);
    register_module("backward", *backward_cell);
  }
}

LSTMOutput LSTM::forward(const Tensor& x, const LSTMState& initial, const Tensor& mask) {
  rnn::check_sequence(x, forward_cell.input_size(), forward_cell.weight_ih.dtype(), "LSTM");
  const Index B = x.size(0), T = x.size(1), H = forward_cell.hidden_size(), D = directions();
  const std::vector<Tensor> masks = rnn::step_masks(mask, B, T, x.dtype(), "LSTM");
  std::vector<Tensor> outputs, final_h, final_c;
  for (Index d = 0; d < D; ++d) {
    LSTMCell& cell = d == 0 ? forward_cell : *backward_cell;
    // W_ih x_t + b_ih for all steps in one product ([B*T, I] @ [I, 4H]), not T small ones.
    const std::vector<Tensor> gi = rnn::split_time_steps(linear(x, cell.weight_ih, cell.bias_ih));
    LSTMState state{rnn::initial_state(initial.h, d, D, B, H, x.dtype(), "LSTM", "h0"),
                    rnn::initial_state(initial.c, d, D, B, H, x.dtype(), "LSTM", "c0")};
    std::vector<Tensor> states(static_cast<std::size_t>(T));
    for (Index i = 0; i < T; ++i) {
      const Index t = d == 0 ? i : T - 1 - i;  // the backward direction starts at the end
      LSTMState next = cell.step(gi[t], state);
      if (masks.empty()) {
        state = next;
      } else {  // padding: keep the state
        state = {where(masks[t], next.h, state.h), where(masks[t], next.c, state.c)};
      }
      states[t] = state.h;
    }
    outputs.push_back(stack(states, 1));  // [B, T, H]
    final_h.push_back(state.h);
    final_c.push_back(state.c);
  }
  return {rnn::join_outputs(outputs, mask), stack(final_h, 0), stack(final_c, 0)};
}

std::string LSTM::describe() const {
  return fmt::format("LSTM({} -> {}{})", forward_cell.input_size(), forward_cell.hidden_size(),
                     backward_cell ? ", bidirectional" : "");
}

}  // namespace attend::nn
