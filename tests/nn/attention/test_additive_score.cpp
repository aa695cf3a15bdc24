// nn::additive_score (v^T tanh(qp + kp) as one op): the same bits as the composed graph it
// replaces, squeeze(linear(tanh(unsqueeze(qp, 2) + unsqueeze(kp, 1)), v), 3), forward and all
// three gradients, in float32 and float64, on shapes that take each path of the GEMM it
// mirrors; the same bits of every parameter's gradient through a small decoder loop that
// reuses the projected keys at every step (the gradients of kp add up across steps); errors;
// and a float64 gradcheck (central differences, gradcheck's defaults: eps 1e-6,
// |analytic - numeric| <= 1e-5 + 1e-3 |numeric|).
#include "support.h"

using namespace attend;
using attend::testing::check_same_bits;
using attend::testing::same_bits;
using Catch::Matchers::Contains;

namespace {

// The graph AdditiveScore::score built before the fused op.
Tensor composed(const Tensor& qp, const Tensor& kp, const Tensor& v) {
  Tensor hidden = tanh(unsqueeze(qp, 2) + unsqueeze(kp, 1));  // [B, Tq, Tk, A]
  return squeeze(nn::linear(hidden, v, Tensor()), 3);
}

// Random inputs with a few large entries in qp, so that some tanh saturate to +-1 exactly
// (then 1 - h^2 = 0, and the gradient's zeros carry a sign).
std::vector<NDArray> inputs(Index batch, Index tq, Index tk, Index a, DType dtype, Generator& gen) {
  NDArray qp = NDArray::normal({batch, tq, a}, gen, 0, 1, dtype);
  NDArray kp = NDArray::normal({batch, tk, a}, gen, 0, 1, dtype);
  NDArray v = NDArray::normal({1, a}, gen, 0, 0.5, dtype);
  for (Index i = 0; i < qp.numel(); i += 7) qp.set({i / (tq * a), i / a % tq, i % a}, 30.0);
  return {qp, kp, v};
}

struct Run {
  NDArray scores, dqp, dkp, dv;
};

// wanted: which of qp, kp, v require a gradient (bits 1, 2, 4); the others' are undefined.
Run run(bool fused, const std::vector<NDArray>& in, const NDArray& g, int wanted = 7) {
  Tensor qp = Tensor(in[0].clone()), kp = Tensor(in[1].clone()), v = Tensor(in[2].clone());
  if (wanted & 1) qp.requires_grad_();
  if (wanted & 2) kp.requires_grad_();
  if (wanted & 4) v.requires_grad_();
  Tensor s = fused ? nn::additive_score(qp, kp, v) : composed(qp, kp, v);
  s.backward(g);
  const auto grad = [](const Tensor& x) {
    return x.grad().defined() ? x.grad().data() : NDArray();
  };
  return {s.data(), grad(qp), grad(kp), grad(v)};
}

bool same_or_both_undefined(const NDArray& a, const NDArray& b) {
  return a.defined() == b.defined() && (!a.defined() || same_bits(a, b));
}

}  // namespace

TEST_CASE("additive_score gives the composed graph's bits, forward and gradients", "[nn]") {
  // {B, Tq, Tk, A}: Tq = 1 and > 1, Tk = 1, Tk and A not multiples of 16, batch 1; float32
  // rows x A up to 16384 take gemm's small loops, beyond its blocked kernel (A = 300: two K
  // blocks), two rows or fewer the small loops again; no keys or no queries at all.
  const std::vector<std::array<Index, 4>> shapes = {
      {1, 1, 7, 5},   {2, 3, 17, 19}, {3, 1, 25, 64},  {2, 3, 1, 9},    {1, 4, 13, 33},
      {1, 1, 2, 40},  {4, 2, 37, 70}, {2, 2, 20, 300}, {2, 1, 300, 64}, {1, 1, 1, 20000},
      {5, 3, 41, 23}, {2, 3, 0, 4},   {2, 0, 3, 4}};
  for (DType dtype : {kFloat32, kFloat64})
    for (const auto& [batch, tq, tk, a] : shapes) {
      INFO(dtype_name(dtype) << " B " << batch << " Tq " << tq << " Tk " << tk << " A " << a);
      Generator gen(batch * 1000 + tq * 100 + tk + a);
      const std::vector<NDArray> in = inputs(batch, tq, tk, a, dtype, gen);
      NDArray g = NDArray::normal({batch, tq, tk}, gen, 0, 1, dtype);
      if (g.numel() > 1) g.set({0, 0, 0}, 0.0);
      const Run fused = run(true, in, g), reference = run(false, in, g);
      CHECK(same_bits(fused.scores, reference.scores));
      CHECK(same_bits(fused.dqp, reference.dqp));
      CHECK(same_bits(fused.dkp, reference.dkp));
      CHECK(same_bits(fused.dv, reference.dv));
    }
}

TEST_CASE("additive_score: the same bits when only some inputs need a gradient", "[nn]") {
  for (Index tq : {1, 3})
    for (int wanted = 1; wanted < 8; ++wanted) {
      INFO("Tq " << tq << " wanted " << wanted);
      Generator gen(tq * 10 + wanted);
      const std::vector<NDArray> in = inputs(2, tq, 9, 7, kFloat32, gen);
      const NDArray g = NDArray::normal({2, tq, 9}, gen, 0, 1, kFloat32);
      const Run fused = run(true, in, g, wanted), reference = run(false, in, g, wanted);
      CHECK(same_bits(fused.scores, reference.scores));
      CHECK(same_or_both_undefined(fused.dqp, reference.dqp));
      CHECK(same_or_both_undefined(fused.dkp, reference.dkp));
      CHECK(same_or_both_undefined(fused.dv, reference.dv));
    }
}

TEST_CASE("additive_score's bits do not depend on the number of threads", "[nn]") {
  // 16 x 3 x 64 x 128 tanh: enough for the op to share its rows out to two threads.
  Generator gen(4);
  const std::vector<NDArray> in = inputs(16, 3, 64, 128, kFloat32, gen);
  NDArray g = NDArray::normal({16, 3, 64}, gen, 0, 1, kFloat32);
  Run one, two, reference;
  {
    testing::ThreadCount threads(1);
    one = run(true, in, g);
  }
  {
    testing::ThreadCount threads(2);
    two = run(true, in, g);
    reference = run(false, in, g);
  }
  for (const Run* r : {&one, &reference}) {
    CHECK(same_bits(two.scores, r->scores));
    CHECK(same_bits(two.dqp, r->dqp));
    CHECK(same_bits(two.dkp, r->dkp));
    CHECK(same_bits(two.dv, r->dv));
  }
}

namespace {

// A small attention decoder: the keys are projected once, then each step scores them against
// its state, attends, and updates the state from the context. The key gradient sums one term
// per step, in the order backward() visits the steps.
std::vector<NDArray> decoder_gradients(bool fused, DType dtype) {
  Generator gen(11), data(12);
  nn::AdditiveScore additive(6, 5, 9, gen);
  nn::Linear update(5, 6, true, gen);
  additive.to(dtype);
  update.to(dtype);
  Tensor keys = Tensor(NDArray::normal({3, 7, 5}, data, 0, 1, dtype)).requires_grad_();
  Tensor state = Tensor(NDArray::normal({3, 6}, data, 0, 1, dtype));
  const Tensor kp = additive.project_keys(keys);
  Tensor loss;
  for (int step = 0; step < 4; ++step) {
    Tensor qp = additive.query_projection(unsqueeze(state, 1));  // [B, 1, A]
    Tensor scores = fused ? nn::additive_score(qp, kp, additive.to_score.weight)
                          : composed(qp, kp, additive.to_score.weight);
    Tensor context = squeeze(nn::attend(scores, keys).context, 1);
    state = tanh(update(context) + state);
    Tensor term = sum(state * state) + sum(scores);
    loss = step == 0 ? term : loss + term;
  }
  loss.backward();
  std::vector<NDArray> grads = {keys.grad().data()};
  for (const Tensor& p : additive.parameters()) grads.push_back(p.grad().data());
  for (const Tensor& p : update.parameters()) grads.push_back(p.grad().data());
  return grads;
}

}  // namespace

TEST_CASE("additive_score in a decoder loop: every parameter's gradient has the same bits",
          "[nn]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    check_same_bits(decoder_gradients(true, dtype), decoder_gradients(false, dtype));
  }
}

TEST_CASE("AdditiveScore::score is the fused op", "[nn]") {
  Generator gen(2);
  nn::AdditiveScore additive(4, 3, 5, gen);
  Tensor q = randn({2, 3, 4}, gen), k = randn({2, 6, 3}, gen);
  const Tensor kp = additive.project_keys(k);
  Tensor s = additive.score(q, kp);
  CHECK(s.shape() == Shape{2, 3, 6});
  CHECK(same_bits(s.data(),
                  composed(additive.query_projection(q), kp, additive.to_score.weight).data()));
}

TEST_CASE("additive_score: errors name the op and the shapes", "[nn]") {
  Tensor qp = zeros({2, 3, 4}), kp = zeros({2, 5, 4}), v = zeros({1, 4});
  CHECK_THROWS_WITH(nn::additive_score(zeros({2, 4}), kp, v),
                    Contains("additive_score") && Contains("[2,4]") && Contains("[2,5,4]"));
  CHECK_THROWS_WITH(nn::additive_score(qp, zeros({3, 5, 4}), v),
                    Contains("additive_score") && Contains("[2,3,4]") && Contains("[3,5,4]"));
  CHECK_THROWS_WITH(nn::additive_score(qp, zeros({2, 5, 6}), v),
                    Contains("additive_score") && Contains("[2,3,4]") && Contains("[2,5,6]"));
  CHECK_THROWS_WITH(nn::additive_score(qp, kp, zeros({4})),
                    Contains("additive_score") && Contains("[1,4]") && Contains("[4]"));
  CHECK_THROWS_WITH(nn::additive_score(qp, kp, zeros({1, 5})),
                    Contains("additive_score") && Contains("[1,5]") && Contains("[2,3,4]"));
  CHECK_THROWS_WITH(nn::additive_score(qp, kp, zeros({1, 4}, kFloat64)),
                    Contains("additive_score") && Contains("float64"));
  nn::AdditiveScore additive(4, 3, 5);
  CHECK_THROWS_WITH(additive.score(zeros({2, 3, 4}), zeros({2, 5, 6})),
                    Contains("additive_score") && Contains("[2,3,5]") && Contains("[2,5,6]"));
}

TEST_CASE("gradcheck: additive_score", "[autograd][gradcheck]") {
  Generator data(9);
  for (Index tq : {1, 3}) {
    Tensor qp = randn({2, tq, 5}, data, kFloat64).requires_grad_();
    Tensor kp = randn({2, 4, 5}, data, kFloat64).requires_grad_();
    Tensor v = randn({1, 5}, data, kFloat64).requires_grad_();
    auto result = gradcheck(
        [](const std::vector<Tensor>& in) { return nn::additive_score(in[0], in[1], in[2]); },
        {qp, kp, v});
    INFO(result.report);
    CHECK(result.ok);
    CHECK(result.ops == std::vector<std::string>{"additive_score"});
  }
}
