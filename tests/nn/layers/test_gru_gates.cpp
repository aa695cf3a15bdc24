// nn::gru_gates (a GRU step's gates and new state as one op): the same bits as the composed
// graph it replaces (the formula GRUCell::step used to build, written out below), forward and
// all three gradients, in float32 and float64; when only some inputs need a gradient; with 1
// and 2 threads; every parameter's gradient through a decoder loop whose state also feeds a
// query and an output layer (the state's gradient then sums several terms, in the order
// backward() visits them); errors; and a float64 gradcheck (central differences, gradcheck's
// defaults: eps 1e-6, |analytic - numeric| <= 1e-5 + 1e-3 |numeric|).
#include "support.h"

using namespace attend;
using attend::testing::check_same_bits;
using attend::testing::same_bits;
using attend::testing::ThreadCount;
using Catch::Matchers::Contains;

namespace {

// The graph GRUCell::step built before the fused op.
Tensor composed(const Tensor& gi, const Tensor& gh, const Tensor& h) {
  std::vector<Tensor> i = chunk(gi, 3, -1);
  std::vector<Tensor> g = chunk(gh, 3, -1);
  Tensor r = sigmoid(i[0] + g[0]);
  Tensor z = sigmoid(i[1] + g[1]);
  Tensor n = tanh(i[2] + r * g[2]);
  return (1.0 - z) * n + z * h;
}

// Random gates with every seventh entry large (sigmoid and tanh then round to exactly 0 or
// +-1, and the derivatives' zeros carry a sign), and a gradient with a +0 and a -0.
struct Inputs {
  NDArray gi, gh, h, g;
};

Inputs inputs(Index batch, Index hidden, DType dtype, Generator& gen) {
  Inputs in{NDArray::normal({batch, 3 * hidden}, gen, 0, 2, dtype),
            NDArray::normal({batch, 3 * hidden}, gen, 0, 2, dtype),
            NDArray::normal({batch, hidden}, gen, 0, 1, dtype),
            NDArray::normal({batch, hidden}, gen, 0, 1, dtype)};
  for (Index e = 0; e < in.gi.numel(); e += 7)
    in.gi.set({e / (3 * hidden), e % (3 * hidden)}, e % 2 ? 40.0 : -40.0);
  in.g.set({0, 0}, 0.0);
  if (in.g.numel() > 1) in.g.set({batch - 1, hidden - 1}, -0.0);
  return in;
}

struct Run {
  NDArray out, dgi, dgh, dh;
};

// wanted: which of gi, gh, h require a gradient (bits 1, 2, 4); the others' are undefined.
Run run(bool fused, const Inputs& in, int wanted = 7) {
  Tensor gi(in.gi.clone()), gh(in.gh.clone()), h(in.h.clone());
  if (wanted & 1) gi.requires_grad_();
  if (wanted & 2) gh.requires_grad_();
  if (wanted & 4) h.requires_grad_();
  Tensor out = fused ? nn::gru_gates(gi, gh, h) : composed(gi, gh, h);
  out.backward(in.g);
  const auto grad = [](const Tensor& x) {
    return x.grad().defined() ? x.grad().data() : NDArray();
  };
  return {out.data(), grad(gi), grad(gh), grad(h)};
}

bool same_or_both_undefined(const NDArray& a, const NDArray& b) {
  return a.defined() == b.defined() && (!a.defined() || same_bits(a, b));
}

void check_same(const Run& a, const Run& b) {
  CHECK(same_bits(a.out, b.out));
  CHECK(same_or_both_undefined(a.dgi, b.dgi));
  CHECK(same_or_both_undefined(a.dgh, b.dgh));
  CHECK(same_or_both_undefined(a.dh, b.dh));
}

}  // namespace

TEST_CASE("gru_gates gives the composed graph's bits, forward and gradients", "[nn][rnn]") {
  // {B, H}: one number, odd widths (the vector loops' tails), the course's 64 x 64, wide rows.
  const std::vector<std::array<Index, 2>> shapes = {{1, 1},   {2, 3},   {3, 17},  {64, 64},
                                                    {5, 128}, {4, 512}, {1, 701}, {33, 20}};
  for (DType dtype : {kFloat32, kFloat64})
    for (const auto& [batch, hidden] : shapes) {
      INFO(dtype_name(dtype) << " B " << batch << " H " << hidden);
      Generator gen(batch * 1000 + hidden);
      const Inputs in = inputs(batch, hidden, dtype, gen);
      const Run fused = run(true, in), reference = run(false, in);
      check_same(fused, reference);
      REQUIRE(fused.dgi.defined());  // and not all zeros (B = H = 1 has its g set to 0)
      if (batch * hidden > 1)
        CHECK(fused.dgi.to_vector() != std::vector<double>(fused.dgi.numel(), 0.0));
    }
}

TEST_CASE("gru_gates: the same bits when only some inputs need a gradient", "[nn][rnn]") {
  for (int wanted = 1; wanted < 8; ++wanted) {
    INFO("wanted " << wanted);
    Generator gen(wanted);
    const Inputs in = inputs(3, 9, kFloat32, gen);
    check_same(run(true, in, wanted), run(false, in, wanted));
  }
}

TEST_CASE("gru_gates' bits do not depend on the number of threads", "[nn][rnn]") {
  // 64 x 3 x 1400 gates: enough for the op (and the composed ops) to share rows out.
  Generator gen(4);
  const Inputs in = inputs(64, 1400, kFloat32, gen);
  Run one, two, reference;
  {
    ThreadCount threads(1);
    one = run(true, in);
  }
  {
    ThreadCount threads(2);
    two = run(true, in);
    reference = run(false, in);
  }
  check_same(two, one);
  check_same(two, reference);
}

namespace {

// An attention-style decoder over 5 steps: the state is the query of a score against fixed
// keys, feeds an output layer, and goes through the cell to the next step, so its gradient
// sums three terms per step. Returns every parameter's gradient and the input's.
std::vector<NDArray> decoder_gradients(bool fused, DType dtype) {
  Generator gen(21), data(22);
  nn::GRUCell cell(4, 6, gen);
  nn::Linear query(6, 3, true, gen), out(6, 2, true, gen);
  cell.to(dtype);
  query.to(dtype);
  out.to(dtype);
  Tensor x = Tensor(NDArray::normal({3, 5, 4}, data, 0, 1, dtype)).requires_grad_();
  Tensor keys = Tensor(NDArray::normal({3, 3}, data, 0, 1, dtype));
  Tensor h = Tensor(NDArray::normal({3, 6}, data, 0, 1, dtype));
  Tensor loss;
  for (Index t = 0; t < 5; ++t) {
    Tensor xt = squeeze(slice(x, 1, t, t + 1), 1);
    Tensor gi = nn::linear(xt, cell.weight_ih, cell.bias_ih);
    Tensor gh = nn::linear(h, cell.weight_hh, cell.bias_hh);
    h = fused ? cell(xt, h) : composed(gi, gh, h);
    Tensor term = sum(query(h) * keys) + sum(tanh(out(h)));
    loss = t == 0 ? term : loss + term;
  }
  loss.backward();
  std::vector<NDArray> grads = {x.grad().data()};
  for (const nn::Module* m : std::initializer_list<const nn::Module*>{&cell, &query, &out})
    for (const Tensor& p : m->parameters()) grads.push_back(p.grad().data());
  return grads;
}

}  // namespace

TEST_CASE("GRUCell in a decoder loop: every parameter's gradient has the same bits", "[nn][rnn]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    check_same_bits(decoder_gradients(true, dtype), decoder_gradients(false, dtype));
  }
}

TEST_CASE("gru_gates: errors name the op and the shapes", "[nn][rnn]") {
  Tensor gi = zeros({2, 12}), gh = zeros({2, 12}), h = zeros({2, 4});
  CHECK_THROWS_WITH(nn::gru_gates(zeros({2, 8}), gh, h),
                    Contains("gru_gates") && Contains("[2,8]") && Contains("[2,4]"));
  CHECK_THROWS_WITH(nn::gru_gates(gi, zeros({3, 12}), h),
                    Contains("gru_gates") && Contains("[3,12]") && Contains("[2,12]"));
  CHECK_THROWS_WITH(nn::gru_gates(gi, gh, zeros({4})),
                    Contains("gru_gates") && Contains("[4]") && Contains("[B, H]"));
  CHECK_THROWS_WITH(nn::gru_gates(gi, gh, Tensor()),
                    Contains("gru_gates") && Contains("undefined"));
  CHECK_THROWS_WITH(nn::gru_gates(gi, gh, zeros({2, 4}, kFloat64)),
                    Contains("gru_gates") && Contains("float64") && Contains("float32"));
}

TEST_CASE("gradcheck: gru_gates", "[autograd][gradcheck]") {
  Generator data(9);
  Tensor gi = randn({2, 9}, data, kFloat64).requires_grad_();
  Tensor gh = randn({2, 9}, data, kFloat64).requires_grad_();
  Tensor h = randn({2, 3}, data, kFloat64).requires_grad_();
  auto result =
      gradcheck([](const std::vector<Tensor>& in) { return nn::gru_gates(in[0], in[1], in[2]); },
                {gi, gh, h});
  INFO(result.report);
  CHECK(result.ok);
  CHECK(result.ops == std::vector<std::string>{"gru_gates"});
}
