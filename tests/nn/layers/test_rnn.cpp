// GRUCell, LSTMCell, GRU, LSTM: the cells against PyTorch's equations written out with scalar
// loops, the unrolled layers against the cells step by step (both directions), padding-mask
// semantics, float64 gradchecks of cells and whole layers (eps 1e-6, atol 1e-5, rtol 1e-3:
// gradcheck's defaults), determinism with 2 threads, parameter names, errors.
#include <cmath>

#include "nn/gru.h"
#include "nn/lstm.h"
#include "nn/rnn.h"
#include "support.h"
#include "tensor/parallel.h"

using namespace attend;
using namespace attend::testing;

namespace {

double sigmoid_of(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// Row `row` of W [R, K] times row b of v [B, K], plus bias[row].
double affine(const NDArray& w, const NDArray& bias, const NDArray& v, Index b, Index row) {
  double total = bias.at({row});
  for (Index k = 0; k < w.size(1); ++k) total += w.at({row, k}) * v.at({b, k});
  return total;
}

// PyTorch's GRU step, written out: rows [0,H) of the stacked weights are the reset gate r,
// [H,2H) the update gate z, [2H,3H) the candidate n.
NDArray reference_gru_step(const nn::GRUCell& cell, const NDArray& x, const NDArray& h) {
  const Index B = x.size(0), H = cell.hidden_size();
  const NDArray wi = cell.weight_ih.data(), wh = cell.weight_hh.data();
  const NDArray bi = cell.bias_ih.data(), bh = cell.bias_hh.data();
  NDArray out = NDArray::zeros({B, H}, kFloat64);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < H; ++j) {
      const double r = sigmoid_of(affine(wi, bi, x, b, j) + affine(wh, bh, h, b, j));
      const double z = sigmoid_of(affine(wi, bi, x, b, H + j) + affine(wh, bh, h, b, H + j));
      const double n =
          std::tanh(affine(wi, bi, x, b, 2 * H + j) + r * affine(wh, bh, h, b, 2 * H + j));
      out.set({b, j}, (1 - z) * n + z * h.at({b, j}));
    }
  return out;
}

// PyTorch's LSTM step, written out: gate rows in the order i, f, g, o.
std::pair<NDArray, NDArray> reference_lstm_step(const nn::LSTMCell& cell, const NDArray& x,
                                                const NDArray& h, const NDArray& c) {
  const Index B = x.size(0), H = cell.hidden_size();
  const NDArray wi = cell.weight_ih.data(), wh = cell.weight_hh.data();
  const NDArray bi = cell.bias_ih.data(), bh = cell.bias_hh.data();
  NDArray h_out = NDArray::zeros({B, H}, kFloat64), c_out = NDArray::zeros({B, H}, kFloat64);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < H; ++j) {
      auto pre = [&](Index gate) {
        return affine(wi, bi, x, b, gate * H + j) + affine(wh, bh, h, b, gate * H + j);
      };
      const double i = sigmoid_of(pre(0)), f = sigmoid_of(pre(1)), g = std::tanh(pre(2)),
                   o = sigmoid_of(pre(3));
      const double c_new = f * c.at({b, j}) + i * g;
      c_out.set({b, j}, c_new);
      h_out.set({b, j}, o * std::tanh(c_new));
    }
  return {h_out, c_out};
}

// x[:, t, :] as [B, I]
NDArray step_of(const NDArray& x, Index t) {
  return squeeze(slice(x, 1, t, t + 1), 1);
}
// states [D, B, H] -> direction d as [B, H]
NDArray direction_of(const NDArray& states, Index d) {
  return squeeze(slice(states, 0, d, d + 1), 0);
}

// All outputs of a layer in one tensor, so that one gradcheck covers them all.
Tensor flat(std::initializer_list<Tensor> parts) {
  std::vector<Tensor> pieces;
  for (const Tensor& p : parts) pieces.push_back(reshape(p, {-1}));
  return concat(pieces, 0);
}

}  // namespace

// ---- cells ---------------------------------------------------------------------------------

TEST_CASE("GRUCell follows PyTorch's gate equations", "[nn][rnn]") {
  Generator gen(100);
  nn::GRUCell cell(3, 4, gen);
  cell.to(kFloat64);
  NDArray x = NDArray::normal({2, 3}, gen, 0, 1, kFloat64);
  NDArray h = NDArray::normal({2, 4}, gen, 0, 1, kFloat64);
  check_close(cell(Tensor(x), Tensor(h)).data(), reference_gru_step(cell, x, h), 1e-12);
}

TEST_CASE("LSTMCell follows PyTorch's gate equations", "[nn][rnn]") {
  Generator gen(101);
  nn::LSTMCell cell(3, 4, gen);
  cell.to(kFloat64);
  NDArray x = NDArray::normal({2, 3}, gen, 0, 1, kFloat64);
  NDArray h = NDArray::normal({2, 4}, gen, 0, 1, kFloat64);
  NDArray c = NDArray::normal({2, 4}, gen, 0, 1, kFloat64);
  nn::LSTMState next = cell(Tensor(x), {Tensor(h), Tensor(c)});
  auto [h_ref, c_ref] = reference_lstm_step(cell, x, h, c);
  check_close(next.h.data(), h_ref, 1e-12);
  check_close(next.c.data(), c_ref, 1e-12);
}

TEST_CASE("GRUCell and LSTMCell gradchecks", "[nn][rnn][gradcheck]") {
  Generator gen(102);
  nn::GRUCell gru(3, 4, gen);
  gru.to(kFloat64);
  Tensor x = randn({2, 3}, gen, kFloat64).requires_grad_();
  Tensor h = randn({2, 4}, gen, kFloat64).requires_grad_();
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return gru(in[0], in[1]); },
                                with_parameters({x, h}, gru));
  INFO(r.report);
  CHECK(r.ok);

  nn::LSTMCell lstm(3, 4, gen);
  lstm.to(kFloat64);
  Tensor c = randn({2, 4}, gen, kFloat64).requires_grad_();
  GradcheckResult rl = gradcheck(
      [&](const std::vector<Tensor>& in) {
        nn::LSTMState next = lstm(in[0], {in[1], in[2]});
        return flat({next.h, next.c});
      },
      with_parameters({x, h, c}, lstm));
  INFO(rl.report);
  CHECK(rl.ok);
}

// ---- unrolled layers -----------------------------------------------------------------------

TEST_CASE("GRU unrolls the cells over the sequence in both directions", "[nn][rnn]") {
  Generator gen(110);
  nn::GRU gru(3, 4, /*bidirectional=*/true, gen);
  gru.to(kFloat64);
  const Index B = 2, T = 4, H = 4;
  NDArray x = NDArray::normal({B, T, 3}, gen, 0, 1, kFloat64);
  NDArray h0 = NDArray::normal({2, B, H}, gen, 0, 1, kFloat64);
  nn::GRUOutput out = gru(Tensor(x), Tensor(h0));
  REQUIRE(out.output.shape() == Shape{B, T, 2 * H});
  REQUIRE(out.h_n.shape() == Shape{2, B, H});
  NDArray forward_out = slice(out.output.data(), 2, 0, H);
  NDArray backward_out = slice(out.output.data(), 2, H, 2 * H);
  // Forward direction: t = 0, 1, ..., T-1 from h0[0].
  NDArray h = direction_of(h0, 0);
  for (Index t = 0; t < T; ++t) {
    h = reference_gru_step(gru.forward_cell, step_of(x, t), h);
    check_close(step_of(forward_out, t), h, 1e-12);
  }
  check_close(direction_of(out.h_n.data(), 0), h, 1e-12);
  // Backward direction: t = T-1, ..., 0 from h0[1]; h_j = [h_fwd_j; h_bwd_j].
  h = direction_of(h0, 1);
  for (Index t = T - 1; t >= 0; --t) {
    h = reference_gru_step(*gru.backward_cell, step_of(x, t), h);
    check_close(step_of(backward_out, t), h, 1e-12);
  }
  check_close(direction_of(out.h_n.data(), 1), h, 1e-12);
}

TEST_CASE("LSTM unrolls the cells over the sequence in both directions", "[nn][rnn]") {
  Generator gen(111);
  nn::LSTM lstm(3, 4, /*bidirectional=*/true, gen);
  lstm.to(kFloat64);
  const Index B = 2, T = 3, H = 4;
  NDArray x = NDArray::normal({B, T, 3}, gen, 0, 1, kFloat64);
  NDArray h0 = NDArray::normal({2, B, H}, gen, 0, 1, kFloat64);
  NDArray c0 = NDArray::normal({2, B, H}, gen, 0, 1, kFloat64);
  nn::LSTMOutput out = lstm(Tensor(x), {Tensor(h0), Tensor(c0)});
  REQUIRE(out.output.shape() == Shape{B, T, 2 * H});
  REQUIRE(out.c_n.shape() == Shape{2, B, H});
  for (Index d = 0; d < 2; ++d) {
    const nn::LSTMCell& cell = d == 0 ? lstm.forward_cell : *lstm.backward_cell;
    NDArray outputs = slice(out.output.data(), 2, d * H, (d + 1) * H);
    NDArray h = direction_of(h0, d), c = direction_of(c0, d);
    for (Index i = 0; i < T; ++i) {
      const Index t = d == 0 ? i : T - 1 - i;
      std::tie(h, c) = reference_lstm_step(cell, step_of(x, t), h, c);
      check_close(step_of(outputs, t), h, 1e-12);
    }
    check_close(direction_of(out.h_n.data(), d), h, 1e-12);
    check_close(direction_of(out.c_n.data(), d), c, 1e-12);
  }
  // Without initial states, the cells start from zeros.
  nn::LSTMOutput from_zero = lstm(Tensor(x));
  NDArray zero = NDArray::zeros({B, H}, kFloat64);
  auto [h1, c1] = reference_lstm_step(lstm.forward_cell, step_of(x, 0), zero, zero);
  check_close(step_of(slice(from_zero.output.data(), 2, 0, H), 0), h1, 1e-12);
}

TEST_CASE("unidirectional layers: shapes and parameter names", "[nn][rnn]") {
  Generator gen(112);
  nn::GRU gru(5, 6, false, gen);
  nn::GRUOutput out = gru(randn({3, 7, 5}, gen));
  CHECK(out.output.shape() == Shape{3, 7, 6});
  CHECK(out.h_n.shape() == Shape{1, 3, 6});
  // The last output is the final state.
  check_close(squeeze(slice(out.output.data(), 1, 6, 7), 1), direction_of(out.h_n.data(), 0), 0);
  std::vector<std::string> names;
  for (auto& [name, p] : gru.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"forward.weight_ih", "forward.weight_hh",
                                          "forward.bias_ih", "forward.bias_hh"});
  CHECK(gru.describe() == "GRU(5 -> 6)");

  nn::LSTM lstm(5, 6, true, gen);
  names.clear();
  for (auto& [name, p] : lstm.named_parameters()) names.push_back(name);
  CHECK(names.size() == 8);
  CHECK(names[4] == "backward.weight_ih");
  CHECK(lstm.forward_cell.weight_ih.shape() == Shape{24, 5});
  CHECK(lstm.forward_cell.weight_hh.shape() == Shape{24, 6});
  CHECK(lstm.backward_cell->bias_hh.shape() == Shape{24});
  CHECK(lstm.describe() == "LSTM(5 -> 6, bidirectional)");
  CHECK(lstm.forward_cell.describe() == "LSTMCell(5 -> 6)");
  // Default init: U(-1/sqrt(H), 1/sqrt(H)) for every parameter.
  const double bound = 1.0 / std::sqrt(6.0);
  for (const Tensor& p : lstm.parameters()) {
    CHECK(max(abs(p.data())).item() <= bound);
    CHECK(max(abs(p.data())).item() > 0.5 * bound);
  }
}

// ---- padding masks -------------------------------------------------------------------------

TEST_CASE("masks: a padded sequence gives the same as the sequence alone", "[nn][rnn]") {
  Generator gen(120);
  nn::GRU gru(3, 4, true, gen);
  nn::LSTM lstm(3, 4, true, gen);
  gru.to(kFloat64);
  lstm.to(kFloat64);
  const Index H = 4;
  // Sequence 0 has 4 real tokens, sequence 1 has 2 followed by 2 padding steps.
  NDArray x = NDArray::normal({2, 4, 3}, gen, 0, 1, kFloat64);
  Tensor mask(f64({1, 1, 1, 1, 1, 1, 0, 0}, {2, 4}));
  NDArray alone = slice(slice(x, 0, 1, 2), 1, 0, 2);  // [1, 2, 3]: sequence 1 without padding

  auto check_layer = [&](const NDArray& padded_out, const NDArray& padded_hn,
                         const NDArray& alone_out, const NDArray& alone_hn) {
    NDArray row = slice(padded_out, 0, 1, 2);
    check_close(slice(row, 1, 0, 2), alone_out, 1e-12);                            // real steps
    check_close(slice(row, 1, 2, 4), NDArray::zeros({1, 2, 2 * H}, kFloat64), 0);  // padding
    check_close(slice(padded_hn, 1, 1, 2), alone_hn, 1e-12);  // both directions' final states
  };
  nn::GRUOutput g = gru(Tensor(x), Tensor(), mask), ga = gru(Tensor(alone));
  check_layer(g.output.data(), g.h_n.data(), ga.output.data(), ga.h_n.data());
  nn::LSTMOutput l = lstm(Tensor(x), {}, mask), la = lstm(Tensor(alone));
  check_layer(l.output.data(), l.h_n.data(), la.output.data(), la.h_n.data());
  check_close(slice(l.c_n.data(), 1, 1, 2), la.c_n.data(), 1e-12);
  // The full-length sequence is unaffected by the mask.
  nn::GRUOutput unmasked = gru(Tensor(x));
  check_close(slice(g.output.data(), 0, 0, 1), slice(unmasked.output.data(), 0, 0, 1), 0);
  // An int64 mask means the same.
  nn::GRUOutput int_mask = gru(Tensor(x), Tensor(), Tensor(mask.data().to(kInt64)));
  check_close(int_mask.output.data(), g.output.data(), 0);
}

TEST_CASE("masks: a padded step carries the state over unchanged", "[nn][rnn]") {
  Generator gen(121);
  nn::GRU gru(3, 4, false, gen);
  gru.to(kFloat64);
  NDArray x = NDArray::normal({1, 3, 3}, gen, 0, 1, kFloat64);
  // A gap in the middle: step 1 is skipped.
  Tensor xt(x, true);
  nn::GRUOutput out = gru(xt, Tensor(), Tensor(f64({1, 0, 1}, {1, 3})));
  NDArray h = NDArray::zeros({1, 4}, kFloat64);
  h = reference_gru_step(gru.forward_cell, step_of(x, 0), h);
  check_close(step_of(out.output.data(), 0), h, 1e-12);
  check_close(step_of(out.output.data(), 1), NDArray::zeros({1, 4}, kFloat64), 0);
  h = reference_gru_step(gru.forward_cell, step_of(x, 2), h);  // continues from step 0's state
  check_close(step_of(out.output.data(), 2), h, 1e-12);
  check_close(direction_of(out.h_n.data(), 0), h, 1e-12);
  // Nothing flows back into the skipped input.
  sum(out.output).backward();
  check_close(step_of(xt.grad().data(), 1), NDArray::zeros({1, 3}, kFloat64), 0);
  CHECK(max(abs(step_of(xt.grad().data(), 0))).item() > 0);
}

// ---- gradchecks of whole layers ------------------------------------------------------------

TEST_CASE("GRU gradchecks: uni- and bidirectional, with and without mask", "[nn][rnn][gradcheck]") {
  const Tensor mask(f64({1, 1, 1, 1, 1, 0}, {2, 3}));
  for (bool bidirectional : {false, true})
    for (bool masked : {false, true}) {
      Generator gen(130 + 2 * bidirectional + masked);
      nn::GRU gru(3, 4, bidirectional, gen);
      gru.to(kFloat64);
      const Index D = bidirectional ? 2 : 1;
      Tensor x = randn({2, 3, 3}, gen, kFloat64).requires_grad_();
      Tensor h0 = randn({D, 2, 4}, gen, kFloat64).requires_grad_();
      auto f = [&](const std::vector<Tensor>& in) {
        nn::GRUOutput out = gru(in[0], in[1], masked ? mask : Tensor());
        return flat({out.output, out.h_n});
      };
      GradcheckResult r = gradcheck(f, with_parameters({x, h0}, gru));
      INFO("bidirectional " << bidirectional << " masked " << masked << ": " << r.report);
      CHECK(r.ok);
      CHECK(r.elements_checked == x.numel() + h0.numel() + gru.parameter_count());
    }
}

TEST_CASE("LSTM gradchecks: uni- and bidirectional, with and without mask",
          "[nn][rnn][gradcheck]") {
  const Tensor mask(f64({1, 1, 0, 1, 1, 1}, {2, 3}));
  for (bool bidirectional : {false, true})
    for (bool masked : {false, true}) {
      Generator gen(140 + 2 * bidirectional + masked);
      nn::LSTM lstm(3, 4, bidirectional, gen);
      lstm.to(kFloat64);
      const Index D = bidirectional ? 2 : 1;
      Tensor x = randn({2, 3, 3}, gen, kFloat64).requires_grad_();
      Tensor h0 = randn({D, 2, 4}, gen, kFloat64).requires_grad_();
      Tensor c0 = randn({D, 2, 4}, gen, kFloat64).requires_grad_();
      auto f = [&](const std::vector<Tensor>& in) {
        nn::LSTMOutput out = lstm(in[0], {in[1], in[2]}, masked ? mask : Tensor());
        return flat({out.output, out.h_n, out.c_n});
      };
      GradcheckResult r = gradcheck(f, with_parameters({x, h0, c0}, lstm));
      INFO("bidirectional " << bidirectional << " masked " << masked << ": " << r.report);
      CHECK(r.ok);
    }
}

TEST_CASE("split_time_steps gives the steps and their gradient", "[nn][rnn][gradcheck]") {
  Generator gen(150);
  for (Index T = 1; T <= 7; ++T) {
    NDArray x = NDArray::normal({2, T, 3}, gen, 0, 1, kFloat64);
    std::vector<Tensor> steps = nn::rnn::split_time_steps(Tensor(x));
    REQUIRE(static_cast<Index>(steps.size()) == T);
    for (Index t = 0; t < T; ++t) check_close(steps[t].data(), step_of(x, t), 0);
  }
  Tensor x = randn({2, 5, 3}, gen, kFloat64).requires_grad_();
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) {
        std::vector<Tensor> steps = nn::rnn::split_time_steps(in[0]);
        // weight each step differently, so that a step delivered to the wrong place shows
        std::vector<Tensor> weighted;
        for (std::size_t t = 0; t < steps.size(); ++t)
          weighted.push_back(steps[t] * static_cast<double>(t + 1));
        return stack(weighted, 0);
      },
      {x});
  INFO(r.report);
  CHECK(r.ok);
}

// ---- determinism and errors ----------------------------------------------------------------

TEST_CASE("GRU and LSTM are deterministic with 2 threads", "[nn][rnn]") {
  ThreadCount scope(2);
  Generator gen(160);
  // Large enough that the input projections and their gradients ([256, 256] @ [256, 384 or
  // 512], 2^24 multiply-adds or more) are split over the threads by gemm.
  const Index B = 16, T = 16, I = 256, H = 128;
  nn::GRU gru(I, H, true, gen);
  nn::LSTM lstm(I, H, true, gen);
  NDArray x = NDArray::normal({B, T, I}, gen);
  NDArray mask = NDArray::zeros({B, T});
  for (Index b = 0; b < B; ++b)
    for (Index t = 0; t < T - b % 4; ++t) mask.set({b, t}, 1);  // lengths 16, 15, 14, 13, ...
  auto run = [&]() {
    gru.zero_grad();
    lstm.zero_grad();
    Tensor xt(x.clone(), true);
    nn::GRUOutput g = gru(xt, Tensor(), Tensor(mask));
    nn::LSTMOutput l = lstm(xt, {}, Tensor(mask));
    (sum(g.output * g.output) + sum(l.output) + sum(l.c_n)).backward();
    std::vector<std::vector<double>> values = {
        g.output.data().to_vector(), l.output.data().to_vector(), xt.grad().data().to_vector()};
    for (const Tensor& p : gru.parameters()) values.push_back(p.grad().data().to_vector());
    for (const Tensor& p : lstm.parameters()) values.push_back(p.grad().data().to_vector());
    return values;
  };
  auto first = run(), second = run();
  REQUIRE(first.size() == second.size());
  for (std::size_t i = 0; i < first.size(); ++i) CHECK(first[i] == second[i]);  // bitwise
}

TEST_CASE("recurrent layers: clear errors for bad input", "[nn][rnn]") {
  Generator gen(170);
  nn::GRU gru(3, 4, true, gen);
  nn::LSTM lstm(3, 4, false, gen);
  Tensor x = randn({2, 5, 3}, gen);
  CHECK(error_message([&] {
          gru(randn({2, 5, 4}, gen));
        }) == "GRU: input must be [B, T, 3] (batch first), got [2,5,4]");
  CHECK(error_message([&] {
          gru(randn({5, 3}, gen));
        }) == "GRU: input must be [B, T, 3] (batch first), got [5,3]");
  CHECK(error_message([&] {
          gru(x, randn({1, 2, 4}, gen));
        }) == "GRU: h0 must be [D, B, H] = [2, 2, 4], got [1,2,4]");
  CHECK(error_message([&] {
          gru(x, Tensor(), ones({5, 2}));
        }) == "GRU: mask must be [B, T] = [2, 5] like the input, got [5,2]");
  CHECK(error_message([&] {
          gru(x, Tensor(), full({2, 5}, 2));
        }) == "GRU: mask must hold only 0 (padding) and 1 (real token), found 2");
  CHECK(error_message([&] {
          lstm(x, {Tensor(), randn({1, 3, 4}, gen)});
        }) == "LSTM: c0 must be [D, B, H] = [1, 2, 4], got [1,3,4]");
  CHECK(error_message([&] {
          lstm(randn({2, 0, 3}, gen));
        }) == "LSTM: input [2,0,3] needs at least one sequence of at least one step");
  CHECK(error_message([&] { gru(Tensor(x.data().to(kFloat64))); }) ==
        "GRU: input is float64 but the parameters are float32 (convert one with .to())");
  CHECK(error_message([&] {
          gru.forward_cell(randn({2, 3}, gen), randn({3, 4}, gen));
        }) == "GRUCell: input [2,3] must be [B, 3] and hidden state [3,4] must be [B, 4], same B");
  CHECK(error_message([&] {
          lstm.forward_cell(randn({2, 3}, gen), {randn({2, 4}, gen), Tensor()});
        }) == "LSTMCell: the input, the hidden state or the cell is undefined");
  CHECK(error_message([&] {
          gru.forward_cell.step(randn({2, 8}, gen), randn({2, 4}, gen));
        }) == "GRUCell::step: gates [2,8] must be [B, 12] and hidden state [2,4] [B, 4], same B");
  CHECK(error_message([&] {
          lstm.forward_cell.step(randn({2, 16}, gen), {randn({2, 4}, gen), randn({3, 4}, gen)});
        }) ==
        "LSTMCell::step: gates [2,16] must be [B, 16], hidden state [2,4] and cell [3,4] "
        "[B, 4], same B");
  CHECK(error_message([&] { nn::GRU(0, 4); }) ==
        "GRUCell: input and hidden sizes must be positive, got 0 and 4");
}
