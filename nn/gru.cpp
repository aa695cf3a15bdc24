#include "nn/gru.h"

#include "autograd/ops.h"
#include "nn/gru_gates.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/rnn.h"

namespace attend::nn {

GRUCell::GRUCell(Index input_size, Index hidden_size, Generator& gen) {
  if (input_size < 1 || hidden_size < 1)
    fail("GRUCell: input and hidden sizes must be positive, got {} and {}", input_size,
         hidden_size);
  const double bound = init::fan_in_bound(hidden_size);  // 1/sqrt(H) for all four
  weight_ih = init::uniform({3 * hidden_size, input_size}, bound, gen);
  weight_hh = init::uniform({3 * hidden_size, hidden_size}, bound, gen);
  bias_ih = init::uniform({3 * hidden_size}, bound, gen);
  bias_hh = init::uniform({3 * hidden_size}, bound, gen);
  register_parameter("weight_ih", weight_ih);
  register_parameter("weight_hh", weight_hh);
  register_parameter("bias_ih", bias_ih);
  register_parameter("bias_hh", bias_hh);
}

Tensor GRUCell::forward(const Tensor& x, const Tensor& h) {
  if (!x.defined() || !h.defined()) fail("GRUCell: the input or the hidden state is undefined");
  if (x.ndim() != 2 || x.size(1) != input_size() || h.shape() != Shape{x.size(0), hidden_size()})
    fail("GRUCell: input {} must be [B, {}] and hidden state {} must be [B, {}], same B", x.shape(),
         input_size(), h.shape(), hidden_size());
  return step(linear(x, weight_ih, bias_ih), h);
}

Tensor GRUCell::step(const Tensor& gi, const Tensor& h) {
  if (!gi.defined() || !h.defined())
    fail("GRUCell::step: the gates or the hidden state is undefined");
  const Index H = hidden_size();
  if (gi.ndim() != 2 || gi.size(1) != 3 * H || h.shape() != Shape{gi.size(0), H})
    fail("GRUCell::step: gates {} must be [B, {}] and hidden state {} [B, {}], same B", gi.shape(),
         3 * H, h.shape(), H);
  // gi = [W_ir x + b_ir | W_iz x + b_iz | W_in x + b_in]
  // gh = [W_hr h + b_hr | W_hz h + b_hz | W_hn h + b_hn]
  // gru_gates computes r, z, n and h' as the header's formulas in one op (nn/gru_gates.h),
  // with the same bits as composing them:
  //   i = chunk(gi, 3, -1), g = chunk(gh, 3, -1)
  //   r = sigmoid(i[0] + g[0]), z = sigmoid(i[1] + g[1]), n = tanh(i[2] + r * g[2])
  //   return (1.0 - z) * n + z * h
  return gru_gates(gi, linear(h, weight_hh, bias_hh), h);
}

std::string GRUCell::describe() const {
  return fmt::format("GRUCell({} -> {})", input_size(), hidden_size());
}

GRU::GRU(Index input_size, Index hidden_size, bool bidirectional, Generator& gen)
    : forward_cell(input_size, hidden_size, gen) {
  register_module("forward", forward_cell);
  if (bidirectional) {
    backward_cell = std::make_unique<GRUCell>(input_size, hidden_size, gen);
    register_module("backward", *backward_cell);
  }
}

GRUOutput GRU::forward(const Tensor& x, const Tensor& h0, const Tensor& mask) {
  rnn::check_sequence(x, forward_cell.input_size(), forward_cell.weight_ih.dtype(), "GRU");
  const Index B = x.size(0), T = x.size(1), H = forward_cell.hidden_size(), D = directions();
  const std::vector<Tensor> masks = rnn::step_masks(mask, B, T, x.dtype(), "GRU");
  std::vector<Tensor> outputs, finals;
  for (Index d = 0; d < D; ++d) {
    GRUCell& cell = d == 0 ? forward_cell : *backward_cell;
    // W_ih x_t + b_ih for all steps in one product ([B*T, I] @ [I, 3H]), not T small ones.
    const std::vector<Tensor> gi = rnn::split_time_steps(linear(x, cell.weight_ih, cell.bias_ih));
    Tensor h = rnn::initial_state(h0, d, D, B, H, x.dtype(), "GRU", "h0");
    std::vector<Tensor> states(static_cast<std::size_t>(T));
    for (Index i = 0; i < T; ++i) {
      const Index t = d == 0 ? i : T - 1 - i;  // the backward direction starts at the end
      Tensor next = cell.step(gi[t], h);
      h = masks.empty() ? next : where(masks[t], next, h);  // padding: keep the state
      states[t] = h;
    }
    outputs.push_back(stack(states, 1));  // [B, T, H]
    finals.push_back(h);
  }
  return {rnn::join_outputs(outputs, mask), stack(finals, 0)};
}

std::string GRU::describe() const {
  return fmt::format("GRU({} -> {}{})", forward_cell.input_size(), forward_cell.hidden_size(),
                     backward_cell ? ", bidirectional" : "");
}

}  // namespace attend::nn
