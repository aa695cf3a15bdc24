// nn::MultiheadAttention: PyTorch's layout, values by hand, masks, causality, the key/value
// cache, and float64 gradchecks (gradcheck's defaults: eps 1e-6, |analytic - numeric| <=
// 1e-5 + 1e-3 |numeric|).
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using attend::testing::check_close;
using attend::testing::f64;
using Catch::Matchers::Contains;

namespace {

// Projections set to the identity and biases to zero: each head sees its own slice of x.
void make_identity(nn::MultiheadAttention& mha) {
  const Index E = mha.embed_dim;
  NDArray w = NDArray::zeros({3 * E, E}, kFloat64);
  for (Index part = 0; part < 3; ++part)
    for (Index i = 0; i < E; ++i) w.set({part * E + i, i}, 1.0);
  mha.in_proj_weight.data() = w;
  mha.in_proj_bias.data() = NDArray::zeros({3 * E}, kFloat64);
  NDArray eye = NDArray::zeros({E, E}, kFloat64);
  for (Index i = 0; i < E; ++i) eye.set({i, i}, 1.0);
  mha.out_proj.weight.data() = eye;
  mha.out_proj.bias.data() = NDArray::zeros({E}, kFloat64);
}

}  // namespace

TEST_CASE("MultiheadAttention: PyTorch's parameter names and shapes", "[nn][transformer]") {
  Generator gen(0);
  nn::MultiheadAttention mha(8, 2, {}, gen);
  auto named = mha.named_parameters();
  REQUIRE(named.size() == 4);
  CHECK(named[0].first == "in_proj_weight");
  CHECK(named[0].second.shape() == Shape{24, 8});
  CHECK(named[1].first == "in_proj_bias");
  CHECK(named[2].first == "out_proj.weight");
  CHECK(named[3].first == "out_proj.bias");
  CHECK(mha.parameter_count() == 24 * 8 + 24 + 8 * 8 + 8);
  // PyTorch's initialisation: zero biases, Xavier-uniform in_proj_weight.
  for (double b : mha.in_proj_bias.data().to_vector()) CHECK(b == 0.0);
  for (double b : mha.out_proj.bias.data().to_vector()) CHECK(b == 0.0);
  const double bound = std::sqrt(6.0 / (8 + 24));
  for (double w : mha.in_proj_weight.data().to_vector()) CHECK(std::abs(w) <= bound);
}

TEST_CASE("MultiheadAttention: two heads by hand", "[nn][transformer]") {
  // E = 2, 2 heads of d_k = 1 (scale 1): head 0 attends with the first coordinate, head 1
  // with the second. x = [[1, 0], [0, 1]] (T = 2, B = 1).
  nn::MultiheadAttention mha(2, 2, {.batch_first = true});
  mha.to(kFloat64);
  make_identity(mha);
  Tensor x(f64({1, 0, 0, 1}, {1, 2, 2}));
  nn::MhaOutput out = mha(x, x, x, {.average_attn_weights = false});
  const double s = 1 / (1 + std::exp(-1.0));  // softmax([1, 0])[0] = 0.7311
  // head 0: scores [[1, 0], [0, 0]]; head 1: scores [[0, 0], [0, 1]]
  check_close(out.weights.data(), f64({s, 1 - s, 0.5, 0.5, 0.5, 0.5, 1 - s, s}, {1, 2, 2, 2}));
  check_close(out.output.data(), f64({s, 0.5, 0.5, s}, {1, 2, 2}));
  nn::MhaOutput averaged = mha(x, x, x);
  check_close(averaged.weights.data(),
              f64({(s + 0.5) / 2, (1.5 - s) / 2, (1.5 - s) / 2, (s + 0.5) / 2}, {1, 2, 2}));
}

TEST_CASE("MultiheadAttention: [T, B, E] and batch_first agree", "[nn][transformer]") {
  Generator gen(1), gen2(1), data(2);
  nn::MultiheadAttention seq_first(8, 4, {}, gen), batch_first(8, 4, {.batch_first = true}, gen2);
  Tensor x = randn({3, 5, 8}, data);  // [B, T, E]
  Tensor memory = randn({3, 7, 8}, data);
  nn::MhaOutput a = batch_first(x, memory, memory);
  nn::MhaOutput b = seq_first(transpose(x, 0, 1), transpose(memory, 0, 1), transpose(memory, 0, 1));
  check_close(transpose(b.output, 0, 1).data().to(kFloat64), a.output.data().to(kFloat64), 1e-6);
  check_close(b.weights.data().to(kFloat64), a.weights.data().to(kFloat64), 1e-6);
  CHECK(a.weights.shape() == Shape{3, 5, 7});
}

TEST_CASE("MultiheadAttention: changing token t+1 leaves outputs up to t bit-identical",
          "[nn][transformer]") {
  Generator gen(3), data(4);
  nn::MultiheadAttention mha(8, 2, {.batch_first = true}, gen);
  Tensor x = randn({2, 6, 8}, data);
  nn::MhaOutput before = mha(x, x, x, {.is_causal = true});
  for (Index t = 0; t + 1 < 6; ++t) {
    NDArray changed = x.data().clone();
    for (Index d = 0; d < 8; ++d) changed.set({1, t + 1, d}, 10.0 + d);
    Tensor y(changed);
    nn::MhaOutput after = mha(y, y, y, {.is_causal = true});
    check_close(slice(after.output, 1, 0, t + 1).data(), slice(before.output, 1, 0, t + 1).data(),
                0);
    CHECK(after.output.data().at({1, t + 1, 0}) != before.output.data().at({1, t + 1, 0}));
  }
}

TEST_CASE("MultiheadAttention: padded keys get zero weight and zero gradient",
          "[nn][transformer]") {
  Generator gen(5), data(6);
  nn::MultiheadAttention mha(4, 2, {.batch_first = true}, gen);
  Tensor q = randn({2, 3, 4}, data);
  Tensor kv = randn({2, 5, 4}, data).requires_grad_();
  Tensor padding(f64({0, 0, 0, 1, 1, 0, 0, 0, 0, 1}, {2, 5}));
  nn::MhaOutput out = mha(
      q, kv, kv, {.key_padding_mask = nn::Mask::blocked(padding), .average_attn_weights = false});
  sum(out.output * out.output).backward();
  for (Index h = 0; h < 2; ++h)
    for (Index i = 0; i < 3; ++i) {
      CHECK(out.weights.data().at({0, h, i, 3}) == 0.0);
      CHECK(out.weights.data().at({0, h, i, 4}) == 0.0);
      CHECK(out.weights.data().at({1, h, i, 4}) == 0.0);
    }
  for (Index d = 0; d < 4; ++d) {
    CHECK(kv.grad().data().at({0, 3, d}) == 0.0);
    CHECK(kv.grad().data().at({1, 4, d}) == 0.0);
  }
  CHECK(kv.grad().data().at({1, 3, 0}) != 0.0);
}

TEST_CASE("MultiheadAttention: the weights stay in the graph", "[nn][transformer]") {
  Generator gen(7), data(8);
  nn::MultiheadAttention mha(4, 2, {.batch_first = true}, gen);
  Tensor x = randn({1, 3, 4}, data);
  nn::MhaOutput out = mha(x, x, x, {.average_attn_weights = false});
  out.weights.retain_grad();
  sum(out.output).backward();
  REQUIRE(out.weights.grad().defined());
  CHECK(out.weights.grad().shape() == Shape{1, 2, 3, 3});
  double total = 0;
  for (double g : out.weights.grad().data().to_vector()) total += std::abs(g);
  CHECK(total > 0);
}

TEST_CASE("MultiheadAttention: forward_step with a cache equals full recomputation",
          "[nn][transformer]") {
  Generator gen(9), data(10);
  nn::MultiheadAttention mha(8, 4, {.batch_first = true}, gen);
  mha.to(kFloat64);
  Tensor x = randn({2, 5, 8}, data, kFloat64);
  nn::MhaOutput full = mha(x, x, x, {.average_attn_weights = false, .is_causal = true});
  nn::KeyValueCache cache;
  for (Index t = 0; t < 5; ++t) {
    nn::MhaOutput step = mha.forward_step(slice(x, 1, t, t + 1), cache, true);
    check_close(step.output.data(), slice(full.output, 1, t, t + 1).data(), 1e-12);
    check_close(step.weights.data(), slice(slice(full.weights, 2, t, t + 1), 3, 0, t + 1).data(),
                1e-12);
  }
  CHECK(cache.length() == 5);
  // Several new positions at once are causal among themselves too.
  nn::KeyValueCache two;
  mha.forward_step(slice(x, 1, 0, 2), two);
  nn::MhaOutput rest = mha.forward_step(slice(x, 1, 2, 5), two);
  check_close(rest.output.data(), slice(full.output, 1, 2, 5).data(), 1e-12);
  // Cross-attention to a cached memory equals forward().
  Tensor memory = randn({2, 4, 8}, data, kFloat64);
  nn::KeyValueCache projected = mha.cache_memory(memory);
  check_close(mha.attend_cached(x, projected).output.data(), mha(x, memory, memory).output.data(),
              1e-12);
}

TEST_CASE("MultiheadAttention: bad input names the shapes", "[nn][transformer]") {
  CHECK_THROWS_WITH(nn::MultiheadAttention(10, 3),
                    Contains("embed_dim 10") && Contains("num_heads 3"));
  nn::MultiheadAttention mha(4, 2, {.batch_first = true});
  Tensor x = zeros({2, 3, 4});
  CHECK_THROWS_WITH(mha(x, x, x, {.attn_mask = nn::Mask::blocked(zeros({3, 2}))}),
                    Contains("attn_mask") && Contains("[3,2]"));
  CHECK_THROWS_WITH(mha(x, x, x, {.key_padding_mask = nn::Mask::blocked(zeros({3, 3}))}),
                    Contains("key_padding_mask") && Contains("[3,3]"));
  CHECK_THROWS_WITH(mha(zeros({2, 3, 5}), x, x), Contains("query") && Contains("[2,3,5]"));
  CHECK_THROWS_WITH(mha(x, zeros({2, 4, 4}), x), Contains("MultiheadAttention"));
}

TEST_CASE("gradcheck: MultiheadAttention with causal and padding masks", "[nn][gradcheck]") {
  Generator gen(11), data(12);
  nn::MultiheadAttention mha(4, 2, {.batch_first = true}, gen);
  mha.to(kFloat64);
  Tensor x = randn({2, 4, 4}, data, kFloat64).requires_grad_();
  Tensor padding(f64({0, 0, 0, 0, 0, 0, 1, 1}, {2, 4}));
  auto result = gradcheck(
      [&](const std::vector<Tensor>& in) {
        nn::MhaOutput out = mha(in[0], in[0], in[0],
                                {.key_padding_mask = nn::Mask::blocked(padding),
                                 .average_attn_weights = false,
                                 .is_causal = true});
        return out.output + sum(out.weights, 1);
      },
      with_parameters({x}, mha));
  INFO(result.report);
  CHECK(result.ok);
}

TEST_CASE("gradcheck: MultiheadAttention, cross-attention with an additive mask",
          "[nn][gradcheck]") {
  Generator gen(13), data(14);
  nn::MultiheadAttention mha(6, 3, {}, gen);  // [T, B, E]
  mha.to(kFloat64);
  Tensor q = randn({3, 2, 6}, data, kFloat64).requires_grad_();
  Tensor memory = randn({5, 2, 6}, data, kFloat64).requires_grad_();
  Tensor bias = randn({3, 5}, data, kFloat64);
  auto result = gradcheck(
      [&](const std::vector<Tensor>& in) {
        return mha(in[0], in[1], in[1], {.attn_mask = nn::Mask::additive(bias)}).output;
      },
      with_parameters({q, memory}, mha));
  INFO(result.report);
  CHECK(result.ok);
}

// ---- weights_hook ----------------------------------------------------------------------------

namespace {

// Head h's weights times (h + 1) / H and the keys in reverse order: a hook that changes both
// what each head reads and how much of it, through differentiable ops only.
Tensor scale_and_reverse(const Tensor& w) {
  const Index H = w.size(1), Tk = w.size(3);
  NDArray scale = NDArray::zeros({1, H, 1, 1}, w.dtype());
  NDArray reversed = NDArray::zeros({Tk}, kInt64);
  for (Index h = 0; h < H; ++h) scale.set({0, h, 0, 0}, static_cast<double>(h + 1) / H);
  for (Index k = 0; k < Tk; ++k) reversed.set({k}, static_cast<double>(Tk - 1 - k));
  return index_select(w, 3, Tensor(reversed)) * Tensor(scale);
}

// Head `head`'s weights set to zero: the head then adds nothing (its context is 0).
nn::MultiheadAttention::WeightsHook mask_head(Index head) {
  return [head](const Tensor& w) {
    NDArray keep = NDArray::full({1, w.size(1), 1, 1}, 1.0, w.dtype());
    keep.set({0, head, 0, 0}, 0.0);
    return w * Tensor(keep);
  };
}

// sum |a - b| over the elements.
double total_difference(const NDArray& a, const NDArray& b) {
  double total = 0;
  for (double d : (a.to(kFloat64) - b.to(kFloat64)).to_vector()) total += std::abs(d);
  return total;
}

}  // namespace

TEST_CASE("MultiheadAttention: an identity hook changes nothing, another hook changes the output",
          "[nn][transformer]") {
  Generator gen(21), data(22);
  nn::MultiheadAttention mha(8, 4, {.batch_first = true}, gen);
  mha.to(kFloat64);
  Tensor x = randn({2, 5, 8}, data, kFloat64), memory = randn({2, 3, 8}, data, kFloat64);
  // Without a hook and without weights forward() takes the fused path; with a hook, the
  // unfused one: the same numbers up to rounding.
  const NDArray plain = mha(x, memory, memory, {.need_weights = false}).output.data();
  Index calls = 0;
  mha.weights_hook = [&](const Tensor& w) {
    ++calls;
    CHECK(w.shape() == Shape{2, 4, 5, 3});  // per head, whatever average_attn_weights says
    return w;
  };
  check_close(mha(x, memory, memory, {.need_weights = false}).output.data(), plain, 1e-12);
  CHECK(calls == 1);

  mha.weights_hook = mask_head(2);
  nn::MhaOutput masked = mha(x, memory, memory, {.average_attn_weights = false});
  CHECK(total_difference(masked.output.data(), plain) > 1e-3);
  // The weights returned are the hook's: head 2 is all zeros, the others rows of 1.
  const NDArray w = masked.weights.data();
  for (Index q = 0; q < 5; ++q) {
    CHECK(w.at({1, 2, q, 0}) + w.at({1, 2, q, 1}) + w.at({1, 2, q, 2}) == 0.0);
    CHECK_THAT(w.at({1, 1, q, 0}) + w.at({1, 1, q, 1}) + w.at({1, 1, q, 2}),
               Catch::Matchers::WithinAbs(1.0, 1e-12));
  }
}

TEST_CASE("MultiheadAttention: the hook applies to the cached decoding paths too",
          "[nn][transformer]") {
  Generator gen(23), data(24);
  nn::MultiheadAttention mha(8, 4, {.batch_first = true}, gen);
  mha.to(kFloat64);
  Tensor x = randn({2, 4, 8}, data, kFloat64), memory = randn({2, 3, 8}, data, kFloat64);
  const NDArray plain_cross = mha(x, memory, memory).output.data();
  mha.weights_hook = mask_head(0);
  // Cross-attention to a cached memory equals forward(), both hooked, and differs from the
  // unhooked output.
  const NDArray hooked_cross = mha(x, memory, memory).output.data();
  check_close(mha.attend_cached(x, mha.cache_memory(memory)).output.data(), hooked_cross, 1e-12);
  CHECK(total_difference(hooked_cross, plain_cross) > 1e-3);
  // Self-attention one step at a time equals the causal forward(), both hooked.
  nn::MhaOutput full = mha(x, x, x, {.average_attn_weights = false, .is_causal = true});
  nn::KeyValueCache cache;
  for (Index t = 0; t < 4; ++t) {
    nn::MhaOutput step = mha.forward_step(slice(x, 1, t, t + 1), cache, true);
    check_close(step.output.data(), slice(full.output, 1, t, t + 1).data(), 1e-12);
    for (Index k = 0; k <= t; ++k) CHECK(step.weights.data().at({0, 0, 0, k}) == 0.0);
  }
}

TEST_CASE("MultiheadAttention: a hook that returns another shape is an error naming both",
          "[nn][transformer]") {
  nn::MultiheadAttention mha(4, 2, {.batch_first = true});
  Tensor x = zeros({2, 3, 4});
  mha.weights_hook = [](const Tensor& w) { return slice(w, 3, 0, 2); };
  CHECK_THROWS_WITH(mha(x, x, x),
                    Contains("weights hook") && Contains("[2,2,3,3]") && Contains("[2,2,3,2]"));
}

TEST_CASE("gradcheck: MultiheadAttention through a hook that scales and permutes the weights",
          "[nn][gradcheck]") {
  Generator gen(25), data(26);
  nn::MultiheadAttention mha(6, 3, {.batch_first = true}, gen);
  mha.to(kFloat64);
  mha.weights_hook = scale_and_reverse;
  Tensor q = randn({2, 3, 6}, data, kFloat64).requires_grad_();
  Tensor memory = randn({2, 4, 6}, data, kFloat64).requires_grad_();
  Tensor padding(f64({0, 0, 0, 0, 0, 0, 0, 1}, {2, 4}));
  auto result = gradcheck(
      [&](const std::vector<Tensor>& in) {
        nn::MhaOutput out =
            mha(in[0], in[1], in[1],
                {.key_padding_mask = nn::Mask::blocked(padding), .average_attn_weights = false});
        return concat({out.output, sum(out.weights, 1)}, 2);  // [B, Tq, E + Tk]
      },
      with_parameters({q, memory}, mha));
  INFO(result.report);
  CHECK(result.ok);
}
