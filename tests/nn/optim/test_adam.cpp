// Adam and AdamW against three updates computed by hand. p starts at [1, -2], the
// gradients are g1 = [0.5, -1], g2 = [1, 2], g3 = [-0.5, 0.25], and lr = 0.1, beta1 = 0.9,
// beta2 = 0.999, eps = 1e-8 throughout.
#include "optim_support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

const std::initializer_list<double> kGrads[] = {{0.5, -1}, {1, 2}, {-0.5, 0.25}};

// Runs three steps and checks p, m (exp_avg) and v (exp_avg_sq) after each.
struct Expected {
  std::initializer_list<double> p, m, v;
};
void check_adam_steps(optim::Optimizer& adam, Tensor& p, std::initializer_list<Expected> steps) {
  const double tolerance = tolerance_for(p.dtype());
  int t = 0;
  for (const Expected& expected : steps) {
    INFO("step " << t + 1 << ", dtype " << dtype_name(p.dtype()));
    set_grad(p, kGrads[t++]);
    adam.step();
    check_close(p.data(), f64(expected.p, {2}), tolerance);
    optim::StateDict state = adam.state();
    REQUIRE(state.size() == 3);
    CHECK(state[0].first == "0.step");
    CHECK(state[0].second.item() == t);
    CHECK(state[1].first == "0.exp_avg");
    check_close(state[1].second, f64(expected.m, {2}), tolerance);
    CHECK(state[2].first == "0.exp_avg_sq");
    check_close(state[2].second, f64(expected.v, {2}), tolerance * 1e-2);  // v is ~1e-3
  }
}

}  // namespace

// The moments are the same for Adam without weight decay and for AdamW (whose decay does
// not touch the gradient):
//   t = 1: m = 0.1 g1 = [0.05, -0.1]                       v = 0.001 g1^2 = [0.00025, 0.001]
//          m_hat = m / 0.1 = g1, v_hat = v / 0.001 = g1^2, so the step is lr g / (|g| + eps):
//          0.1 * 0.5 / 0.50000001 = 0.099999998, 0.1 * 1 / 1.00000001 = 0.0999999990
//   t = 2: m = 0.9 [0.05, -0.1] + 0.1 [1, 2] = [0.145, 0.11]
//          v = 0.999 [0.00025, 0.001] + 0.001 [1, 4] = [0.00124975, 0.004999]
//          m_hat = m / (1 - 0.9^2 = 0.19) = [0.76315789474, 0.57894736842]
//          v_hat = v / (1 - 0.999^2 = 0.001999) = [0.62518759380, 2.50075037519]
//          sqrt(v_hat) = [0.79068805088, 1.58137610175]
//          step = 0.1 m_hat / (sqrt(v_hat) + 1e-8) = [0.09651820136, 0.03661035247]
//   t = 3: m = 0.9 [0.145, 0.11] + 0.1 [-0.5, 0.25] = [0.0805, 0.124]
//          v = 0.999 [0.00124975, 0.004999] + 0.001 [0.25, 0.0625] = [0.00149850025, 0.005056501]
//          m_hat = m / (1 - 0.9^3 = 0.271) = [0.29704797048, 0.45756457565]
//          v_hat = v / (1 - 0.999^3 = 0.002997001) = [0.49999991658, 1.68718695790]
//          step = 0.1 m_hat / (sqrt(v_hat) + 1e-8) = [0.04200892976, 0.03522660472]

TEST_CASE("Adam: three steps with bias correction", "[optim]") {
  // p1 = [1 - 0.099999998, -2 + 0.099999999]          = [0.900000002, -1.900000001]
  // p2 = [0.900000002 - 0.09651820136, -1.900000001 - 0.03661035247]
  // p3 = p2 - [0.04200892976, 0.03522660472]
  const DType dtype = GENERATE(kFloat64, kFloat32);
  Tensor p = parameter({1, -2}, dtype);
  optim::Adam adam({p}, {.lr = 0.1});
  check_adam_steps(
      adam, p,
      {{{0.900000002, -1.900000001}, {0.05, -0.1}, {0.00025, 0.001}},
       {{0.8034818006385094, -1.9366103534720749}, {0.145, 0.11}, {0.00124975, 0.004999}},
       {{0.7614728708755779, -1.9718369581894204}, {0.0805, 0.124}, {0.00149850025, 0.005056501}}});
  CHECK(adam.steps_taken() == 3);
}

TEST_CASE("AdamW: decoupled weight decay p -= lr * wd * p before the Adam step", "[optim]") {
  // weight_decay 0.1: each step first multiplies p by 1 - 0.1 * 0.1 = 0.99, then takes the
  // same Adam step as above (the moments do not see the decay):
  // p1 = 0.99 [1, -2] - [0.099999998, -0.099999999]        = [0.890000002, -1.880000001]
  // p2 = 0.99 p1 - [0.09651820136, 0.03661035247]          = [0.78458180062, -1.89781035346]
  // p3 = 0.99 p2 - [0.04200892976, 0.03522660472]          = [0.73472705285, -1.91405885464]
  const DType dtype = GENERATE(kFloat64, kFloat32);
  Tensor p = parameter({1, -2}, dtype);
  optim::AdamW adamw({p}, {.lr = 0.1, .weight_decay = 0.1});
  check_adam_steps(
      adamw, p,
      {{{0.890000002, -1.880000001}, {0.05, -0.1}, {0.00025, 0.001}},
       {{0.7845818006185094, -1.897810353462075}, {0.145, 0.11}, {0.00124975, 0.004999}},
       {{0.7347270528493928, -1.9140588546447996}, {0.0805, 0.124}, {0.00149850025, 0.005056501}}});
}

TEST_CASE("AdamW's default weight decay is 0.01, Adam's is 0", "[optim]") {
  Tensor p = parameter({1}, kFloat64), q = parameter({1}, kFloat64);
  optim::AdamW adamw({p});
  optim::Adam adam({q});
  CHECK(adamw.options().weight_decay == 0.01);
  CHECK(adam.options().weight_decay == 0);
  CHECK(adamw.learning_rate() == 1e-3);
  // With a zero gradient Adam does not move; AdamW shrinks p by 1 - 1e-3 * 0.01.
  set_grad(p, {0});
  set_grad(q, {0});
  adamw.step();
  adam.step();
  CHECK_THAT(p.item(), Catch::Matchers::WithinAbs(1 - 1e-5, 1e-15));
  CHECK(q.item() == 1);
}

TEST_CASE("Adam with weight decay: L2 added to the gradient", "[optim]") {
  // weight_decay 0.1: the gradient becomes g + 0.1 p, so the moments change too.
  //   t = 1: g = [0.5 + 0.1, -1 - 0.2] = [0.6, -1.2]; m = [0.06, -0.12]; v = [0.00036, 0.00144]
  //          step = 0.1 g / (|g| + 1e-8): p1 = [0.9000000016667, -1.9000000008333]
  //   t = 2: g = [1 + 0.09000000017, 2 - 0.19000000008] = [1.09000000017, 1.80999999992]
  //          m = 0.9 [0.06, -0.12] + 0.1 g = [0.16300000002, 0.07299999999]
  //          v = 0.999 [0.00036, 0.00144] + 0.001 g^2 = [0.00154774000, 0.00471466000]
  //          p2 = p1 - 0.1 (m / 0.19) / (sqrt(v / 0.001999) + 1e-8)
  //             = [0.9000000017 - 0.0974970313, -1.9000000008 - 0.0250178776]
  const DType dtype = GENERATE(kFloat64, kFloat32);
  Tensor p = parameter({1, -2}, dtype);
  optim::Adam adam({p}, {.lr = 0.1, .weight_decay = 0.1});
  check_adam_steps(adam, p,
                   {{{0.9000000016666666, -1.9000000008333333}, {0.06, -0.12}, {0.00036, 0.00144}},
                    {{0.8025029703202308, -1.9250178784643248},
                     {0.16300000001666665, 0.07299999999166666},
                     {0.001547740000363335, 0.0047146599996983375}}});
}

TEST_CASE("Adam counts updates per parameter: a late parameter gets t = 1", "[optim]") {
  // b has no gradient at the first step, so its first update is Adam's first step,
  // lr g / (|g| + eps), whatever steps_taken() says (as in PyTorch's per-parameter step).
  Tensor a = parameter({1}, kFloat64), b = parameter({5, 6}, kFloat64);
  optim::Adam adam({a, b}, {.lr = 0.1});
  set_grad(a, {1});
  adam.step();
  check_close(b.data(), f64({5, 6}, {2}));  // skipped
  set_grad(b, {2, -4});
  adam.step();
  check_close(b.data(), f64({5 - 0.1 * 2 / (2 + 1e-8), 6 + 0.1 * 4 / (4 + 1e-8)}, {2}), 1e-14);
  CHECK(adam.steps_taken() == 2);
  optim::StateDict state = adam.state();
  REQUIRE(state.size() == 6);
  CHECK(state[0].first == "0.step");
  CHECK(state[0].second.item() == 2);  // a was updated twice (with its stale gradient)
  CHECK(state[3].first == "1.step");
  CHECK(state[3].second.item() == 1);
}

TEST_CASE("Adam option errors", "[optim]") {
  Tensor p = parameter({1}, kFloat64);
  CHECK_THAT(error_message([&] { optim::Adam({p}, {.beta1 = 1}); }),
             Contains("Adam: beta1 must be in [0, 1), got 1"));
  CHECK_THAT(error_message([&] { optim::Adam({p}, {.beta2 = -0.1}); }),
             Contains("Adam: beta2 must be in [0, 1), got -0.1"));
  CHECK_THAT(error_message([&] { optim::AdamW({p}, {.eps = -1e-8}); }),
             Contains("AdamW: eps must be finite and >= 0, got -1e-08"));
  CHECK_THAT(error_message([&] { optim::AdamW({p}, {.weight_decay = -0.01}); }),
             Contains("AdamW: weight_decay must be finite and >= 0, got -0.01"));
  CHECK_THAT(error_message([&] { optim::Adam({p}, {.lr = -1e-3}); }),
             Contains("learning rate must be finite and >= 0, got -0.001"));
}

TEST_CASE("Adam step error: the parameter was converted after the moments were made", "[optim]") {
  Tensor ok = parameter({5}, kFloat64), p = parameter({1, 2}, kFloat64);
  optim::AdamW adamw({ok, p});
  set_grad(ok, {1});
  set_grad(p, {1, 1});
  adamw.step();
  p.data() = p.data().to(kFloat32);
  set_grad(p, {1, 1});
  const double before = ok.item();
  CHECK_THAT(error_message([&] { adamw.step(); }),
             Contains("AdamW.step: parameter 1 is now [2] float32 but its exp_avg is [2] float64"));
  CHECK(ok.item() == before);  // nothing was updated
  CHECK(adamw.state()[0].second.item() == 1);
  CHECK(adamw.steps_taken() == 1);
}
