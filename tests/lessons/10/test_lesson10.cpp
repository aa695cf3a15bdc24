// Lesson 10: hard attention. The REINFORCE estimator is unbiased (checked against the exact
// gradient of the expected log-likelihood, by enumerating every choice of regions), the
// sampled unroll's pieces pass gradcheck, and hard attention is invisible to backprop.
#include <cmath>

#include "lessons/10_hard_attention/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::lesson10;
using attend::testing::check_close;

namespace {

Vocabulary tiny_vocabulary() {
  Vocabulary vocab;
  for (const char* w : {"a", "red", "bag", "left", "of", "blue", "boot"}) vocab.add(w);
  return vocab;
}

CaptionDecoderSizes tiny_sizes(Index vocab) {
  return {.vocab = vocab, .features = 2, .embedding = 2, .hidden = 3, .attention = 3};
}

// `copies` copies of the caption `words`, as a batch.
CaptionBatch repeated_caption(const std::vector<std::string>& words, Index copies,
                              const Vocabulary& vocab) {
  static std::vector<CanvasExample> keep;  // make_caption_batch reads pointers
  keep.assign(1, CanvasExample{});
  keep[0].words = words;
  keep[0].word_object.assign(words.size(), -1);
  std::vector<const CanvasExample*> batch(static_cast<std::size_t>(copies), &keep[0]);
  return make_caption_batch(batch, vocab, kFloat64);
}

// A tiny float64 decoder, its vocabulary and the generator that drew its weights.
struct TinyDecoder {
  explicit TinyDecoder(std::uint64_t seed)
      : gen(seed), vocab(tiny_vocabulary()), decoder(tiny_sizes(vocab.size()), gen) {
    decoder.to(kFloat64);
  }
  Generator gen;
  Vocabulary vocab;
  CaptionDecoder decoder;
};

// Every parameter's gradient, flattened in a fixed order (0 where there is none).
std::vector<double> flat_gradient(CaptionDecoder& decoder) {
  std::vector<double> flat;
  for (const Tensor& p : decoder.parameters()) {
    std::vector<double> g = p.grad().defined()
                                ? p.grad().data().to_vector()
                                : std::vector<double>(static_cast<std::size_t>(p.numel()), 0.0);
    flat.insert(flat.end(), g.begin(), g.end());
  }
  return flat;
}

// One image of 4 regions (a 2x2 grid) of D = 2, repeated n times.
Tensor image_regions(const NDArray& one, Index n) {
  return Tensor(broadcast_to(one, {n, one.size(1), one.size(2)}).clone());
}

struct Agreement {
  Index components = 0, disagreeing = 0;
  double mean_z2 = 0;  // mean of ((estimate - exact) / SE)^2 over components with SE > 0
};

// Compares Monte-Carlo estimates (one vector per group mean) with the exact gradient:
// a component disagrees when it is more than `multiple` standard errors away (or, when all
// estimates are equal, differs at all).
Agreement compare(const std::vector<std::vector<double>>& groups, const std::vector<double>& exact,
                  double multiple) {
  Agreement a;
  const double k = static_cast<double>(groups.size());
  Index with_se = 0;
  for (std::size_t j = 0; j < exact.size(); ++j) {
    double mean = 0, var = 0;
    for (const auto& g : groups) mean += g[j] / k;
    for (const auto& g : groups) var += (g[j] - mean) * (g[j] - mean) / (k - 1);
    const double se = std::sqrt(var / k), diff = std::abs(mean - exact[j]);
    ++a.components;
    if (se > 0) {
      a.mean_z2 += (diff / se) * (diff / se);
      ++with_se;
      a.disagreeing += diff > multiple * se;
    } else {
      a.disagreeing += diff > 1e-10;
    }
  }
  if (with_se > 0) a.mean_z2 /= static_cast<double>(with_se);
  return a;
}

// The enumerable model of the unbiasedness tests: L = 4 regions, a caption of 1 word + <eos>
// = 2 steps, so 4^2 = 16 choices s = (s_1, s_2).
constexpr Index kChoices = 16;
const std::vector<std::string> kOneWord = {"bag"};

// The exact gradient of J(W) = sum_s pi(s|a) log p(y|s,a) (eq. 10, with the sampling policy
// pi = softmax(e / tau); tau = 1: alpha), by autograd over all 16 choices forced in one batch.
std::vector<double> exact_gradient(CaptionDecoder& decoder, const NDArray& image,
                                   const Vocabulary& vocab, double temperature, Generator& gen) {
  NDArray every = NDArray::zeros({kChoices, 2}, kInt64);
  for (Index s = 0; s < kChoices; ++s) {
    every.set({s, 0}, static_cast<double>(s / 4));
    every.set({s, 1}, static_cast<double>(s % 4));
  }
  decoder.zero_grad();
  HardUnrolled all =
      hard_unroll(decoder, image_regions(image, kChoices),
                  repeated_caption(kOneWord, kChoices, vocab), 0.0, gen, every, temperature);
  Tensor p_s = exp(all.log_p_samples);
  CHECK(sum(p_s).item() == Approx(1.0).margin(1e-12));  // a distribution over s
  sum(p_s * all.log_likelihood).backward();
  return flat_gradient(decoder);
}

// `groups` minibatch means of `per_group` REINFORCE estimates (eq. 12, with a baseline b = -2
// that is deliberately not the mean): each is minus the gradient of reinforce_surrogate.
std::vector<std::vector<double>> reinforce_estimates(CaptionDecoder& decoder, const NDArray& image,
                                                     const Vocabulary& vocab,
                                                     const HardOptions& rule, Index groups,
                                                     Index per_group, Generator& gen) {
  std::vector<std::vector<double>> out;
  for (Index g = 0; g < groups; ++g) {
    decoder.zero_grad();
    HardUnrolled drawn = hard_unroll(decoder, image_regions(image, per_group),
                                     repeated_caption(kOneWord, per_group, vocab),
                                     rule.semi_sampling, gen, {}, rule.temperature);
    reinforce_surrogate(drawn, /*baseline=*/-2.0, rule).backward();
    std::vector<double> grad = flat_gradient(decoder);
    for (double& v : grad) v = -v;  // the surrogate is minimised: its gradient is -estimate
    out.push_back(grad);
  }
  return out;
}

constexpr double kMultiple = 5;                 // standard errors allowed per component
constexpr Index kGroups = 400, kPerGroup = 50;  // 20,000 samples

}  // namespace

TEST_CASE("REINFORCE is unbiased: the mean of 20,000 estimates matches the exact gradient") {
  TinyDecoder tiny(2024);
  auto& [gen, vocab, decoder] = tiny;
  NDArray image = NDArray::normal({1, 4, 2}, gen, 0, 1, kFloat64);
  const std::vector<double> exact = exact_gradient(decoder, image, vocab, 1.0, gen);

  const HardOptions options{.semi_sampling = 0, .reinforce_weight = 1, .entropy_weight = 0};
  Agreement reinforce =
      compare(reinforce_estimates(decoder, image, vocab, options, kGroups, kPerGroup, gen), exact,
              kMultiple);
  INFO("components " << reinforce.components << ", disagreeing " << reinforce.disagreeing
                     << ", mean z^2 " << reinforce.mean_z2);
  CHECK(reinforce.components > 150);
  CHECK(reinforce.disagreeing == 0);
  // The standard errors are honest (not inflated): z^2 averages near 1.
  CHECK(reinforce.mean_z2 > 0.3);
  CHECK(reinforce.mean_z2 < 3.0);

  // The check can fail: without the score-function term (lambda_r = 0, plain backprop through
  // the sampled region) the estimate is biased, and f_att gets no gradient at all.
  HardOptions no_score = options;
  no_score.reinforce_weight = 0;
  Agreement biased =
      compare(reinforce_estimates(decoder, image, vocab, no_score, kGroups, kPerGroup, gen), exact,
              kMultiple);
  INFO("without the score term: disagreeing " << biased.disagreeing);
  CHECK(biased.disagreeing > 10);
}

TEST_CASE("REINFORCE with a temperature is unbiased for the tempered policy's objective") {
  // Lesson 10 samples from pi = softmax(e / tau). The estimate (with log pi(s) in the score
  // term) must match the exact gradient of sum_s pi(s) log p(y|s,a), and not that of the
  // objective under alpha itself. tau = 0.5: sharper than alpha, not yet deterministic.
  constexpr double kTau = 0.5;
  TinyDecoder tiny(2025);
  auto& [gen, vocab, decoder] = tiny;
  NDArray image = NDArray::normal({1, 4, 2}, gen, 0, 1, kFloat64);
  const std::vector<double> exact = exact_gradient(decoder, image, vocab, kTau, gen);
  const HardOptions rule{
      .semi_sampling = 0, .reinforce_weight = 1, .entropy_weight = 0, .temperature = kTau};
  const std::vector<std::vector<double>> estimates =
      reinforce_estimates(decoder, image, vocab, rule, kGroups, kPerGroup, gen);
  Agreement tempered = compare(estimates, exact, kMultiple);
  INFO("components " << tempered.components << ", disagreeing " << tempered.disagreeing
                     << ", mean z^2 " << tempered.mean_z2);
  CHECK(tempered.components > 150);
  CHECK(tempered.disagreeing == 0);
  // No bound on the mean z^2 here: the components move together (a few random quantities
  // drive all 220), so their mean z^2 has few degrees of freedom (0.13 with this seed, 0.69
  // in the test above). That the standard errors are not too wide to notice a wrong
  // target is checked instead: the same estimates against the untempered objective's gradient.
  Agreement wrong = compare(estimates, exact_gradient(decoder, image, vocab, 1.0, gen), kMultiple);
  INFO("against tau = 1: disagreeing " << wrong.disagreeing);
  CHECK(wrong.disagreeing > 10);
}

TEST_CASE("the sampled unroll's log p(y|s), log p(s) and entropy pass gradcheck", "[gradcheck]") {
  // Semi-sampling 0.5 over 4 captions: some images read sampled regions, the others alpha.
  // The draws are made again from the same seed at every evaluation, so they are fixed.
  Generator gen(8);
  Vocabulary vocab = tiny_vocabulary();
  CaptionDecoder decoder(tiny_sizes(vocab.size()), gen);
  decoder.to(kFloat64);
  Tensor regions = randn({4, 4, 2}, gen, kFloat64);
  CaptionBatch batch = repeated_caption({"a", "red", "bag"}, 4, vocab);
  NDArray sampled;
  GradcheckOptions tolerances;  // |analytic - numeric| <= 1e-6 + 1e-4 |numeric|, eps 1e-6
  tolerances.atol = 1e-6;
  tolerances.rtol = 1e-4;
  GradcheckResult result = gradcheck(
      [&](const std::vector<Tensor>&) {
        Generator draws(77);
        HardUnrolled out = hard_unroll(decoder, regions, batch, 0.5, draws);
        sampled = out.sampled;
        return sum(out.log_likelihood) + 0.3 * sum(out.log_p_samples) + 0.2 * sum(out.entropy);
      },
      decoder.parameters(), tolerances);
  INFO(result.report);
  CHECK(result.ok);
  const double images_sampled = sum(Tensor(sampled)).item();
  CHECK(images_sampled > 0);  // both kinds of image took part
  CHECK(images_sampled < 4);
}

TEST_CASE("hard attention: samples, log p(s), and the expected context as a special case") {
  Generator gen(4);
  Vocabulary vocab = tiny_vocabulary();
  CaptionDecoder decoder(tiny_sizes(vocab.size()), gen);
  decoder.to(kFloat64);
  Tensor regions = randn({3, 4, 2}, gen, kFloat64);
  CaptionBatch batch = repeated_caption({"a", "blue", "boot"}, 3, vocab);

  // semi_sampling = 1: every image uses alpha, exactly soft attention.
  HardUnrolled expected = hard_unroll(decoder, regions, batch, 1.0, gen);
  check_close(expected.logits.data(), unroll(decoder, regions, batch.inputs).logits.data(), 1e-12);
  check_close(expected.log_p_samples.data(), NDArray::zeros({3}, kFloat64), 0);
  CHECK(expected.samples.to_vector() == std::vector<double>(12, -1.0));

  // Forced regions: log p(s) is the sum of log alpha at the chosen regions.
  NDArray forced = NDArray::from_list({0, 1, 2, 3, 3, 2, 1, 0, 1, 1, 1, 1}, {3, 4}, kInt64);
  HardUnrolled chosen = hard_unroll(decoder, regions, batch, 0.0, gen, forced);
  for (Index b = 0; b < 3; ++b) {
    double log_p = 0;
    for (Index t = 0; t < 4; ++t)
      log_p += std::log(chosen.alphas.data().at({b, t, static_cast<Index>(forced.at({b, t}))}));
    CHECK(chosen.log_p_samples.data().at({b}) == Approx(log_p).margin(1e-12));
  }
  // With a temperature tau the policy is softmax(e / tau) = alpha^(1/tau) / sum_i alpha_i^(1/tau)
  // (e = log alpha + a constant), so log p(s) at the forced regions has this closed form.
  const double tau = 0.5;
  HardUnrolled sharp = hard_unroll(decoder, regions, batch, 0.0, gen, forced, tau);
  for (Index b = 0; b < 3; ++b) {
    double log_p = 0;
    for (Index t = 0; t < 4; ++t) {
      double normaliser = 0;
      for (Index i = 0; i < 4; ++i)
        normaliser += std::pow(sharp.alphas.data().at({b, t, i}), 1 / tau);
      log_p +=
          std::log(sharp.alphas.data().at({b, t, static_cast<Index>(forced.at({b, t}))})) / tau -
          std::log(normaliser);
    }
    CHECK(sharp.log_p_samples.data().at({b}) == Approx(log_p).margin(1e-12));
  }
  // Sampled regions are valid indices, and every image sampled with semi_sampling = 0.
  HardUnrolled drawn = hard_unroll(decoder, regions, batch, 0.0, gen);
  for (double s : drawn.samples.to_vector()) CHECK((s >= 0 && s < 4));
  CHECK(sum(Tensor(drawn.sampled)).item() == 3.0);
  // A region outside the grid is an error, not a crash.
  NDArray bad = NDArray::full({3, 4}, 4, kInt64);
  CHECK_THROWS_AS(hard_unroll(decoder, regions, batch, 0.0, gen, bad), Error);
}

TEST_CASE("backprop cannot reach f_att through a sampled region, but can through alpha") {
  Generator gen(6);
  Vocabulary vocab = tiny_vocabulary();
  CaptionDecoder decoder(tiny_sizes(vocab.size()), gen);
  decoder.to(kFloat64);
  Tensor regions = randn({4, 4, 2}, gen, kFloat64);
  CaptionBatch batch = repeated_caption({"a", "red", "bag"}, 4, vocab);
  CHECK(backprop_gradient_norm(decoder, regions, batch, /*soft=*/false, gen) == 0.0);
  CHECK(backprop_gradient_norm(decoder, regions, batch, /*soft=*/true, gen) > 1e-6);
  // With the REINFORCE term the attention does get a gradient.
  decoder.zero_grad();
  HardAttentionLoss loss(decoder, {.semi_sampling = 0}, gen);
  loss(regions, batch).total.backward();
  double norm2 = 0;
  for (double g : attention_gradient(decoder)) norm2 += g * g;
  CHECK(norm2 > 0);
}

TEST_CASE("the moving-average baseline: starts at the first batch, then b = 0.9 b + 0.1 mean") {
  Generator gen(12);
  Vocabulary vocab = tiny_vocabulary();
  CaptionDecoder decoder(tiny_sizes(vocab.size()), gen);
  decoder.to(kFloat64);
  Tensor regions = randn({5, 4, 2}, gen, kFloat64);
  CaptionBatch batch = repeated_caption({"a", "red", "bag"}, 5, vocab);
  Generator a(1), b(1);
  HardAttentionLoss loss(decoder, {.semi_sampling = 0}, a);
  loss(regions, batch);
  // The same draws again, to know the first batch's mean log-likelihood.
  const double first = mean(hard_unroll(decoder, regions, batch, 0.0, b).log_likelihood).item();
  CHECK(loss.baseline() == Approx(first).margin(1e-12));
  loss(regions, batch);
  const double second = mean(hard_unroll(decoder, regions, batch, 0.0, b).log_likelihood).item();
  CHECK(loss.baseline() == Approx(0.9 * first + 0.1 * second).margin(1e-12));
}

TEST_CASE("variance normalisation divides the centred reward by max(1, its moving spread)") {
  TinyDecoder tiny(13);
  auto& [gen, vocab, decoder] = tiny;
  // Large regions, so that the sampled choice moves log p(y|s,a) by more than 1 nat.
  Tensor regions = randn({8, 4, 2}, gen, kFloat64) * 30.0;
  CaptionBatch batch = repeated_caption({"a", "red", "bag", "left", "of", "a", "boot"}, 8, vocab);
  Generator a(3), b(3);
  HardAttentionLoss loss(decoder, {.semi_sampling = 0, .normalise_advantage = true}, a);
  // The same draws again: the first batch's rewards, and the spread around their mean.
  auto rewards = [&] {
    return hard_unroll(decoder, regions, batch, 0.0, b).log_likelihood.data().to_vector();
  };
  auto mean_squared = [](const std::vector<double>& r, double centre) {
    double s = 0;
    for (double v : r) s += (v - centre) * (v - centre) / static_cast<double>(r.size());
    return s;
  };
  loss(regions, batch);
  const std::vector<double> first = rewards();
  double b1 = 0;
  for (double v : first) b1 += v / static_cast<double>(first.size());
  const double spread1 = mean_squared(first, b1);
  REQUIRE(std::sqrt(spread1) > 1);  // else max(1, .) would hide the division
  CHECK(loss.advantage_scale() == Approx(std::sqrt(spread1)).epsilon(1e-12));
  // Second batch: centred on the baseline before its update, then averaged 0.9 / 0.1.
  loss(regions, batch);
  const double spread2 = 0.9 * spread1 + 0.1 * mean_squared(rewards(), b1);
  CHECK(loss.advantage_scale() == Approx(std::max(1.0, std::sqrt(spread2))).epsilon(1e-12));
  // Without normalisation the reward is not divided.
  HardAttentionLoss plain(decoder, {.semi_sampling = 0}, a);
  plain(regions, batch);
  CHECK(plain.advantage_scale() == 1.0);
}

TEST_CASE("the surrogate's REINFORCE term scales as 1 / scale") {
  TinyDecoder tiny(14);
  auto& [gen, vocab, decoder] = tiny;
  Tensor regions = randn({3, 4, 2}, gen, kFloat64);
  CaptionBatch batch = repeated_caption({"a", "red", "bag"}, 3, vocab);
  Generator draws(5);
  const HardUnrolled out = hard_unroll(decoder, regions, batch, 0.0, draws);
  const HardOptions only_reinforce{.reinforce_weight = 1};
  // surrogate - (-mean log p(y|s)) is the REINFORCE term alone (no entropy weight).
  auto reinforce_term = [&](double scale) {
    return (reinforce_surrogate(out, -2.0, only_reinforce, scale) + mean(out.log_likelihood))
        .item();
  };
  const double unscaled = reinforce_term(1.0);
  REQUIRE(std::abs(unscaled) > 1e-6);
  CHECK(reinforce_term(4.0) == Approx(unscaled / 4.0).epsilon(1e-12));
}
