// Stochastic hard attention (Xu et al. 2015, section 4.1). Instead of the weighted average of
// all regions, the decoder reads ONE region per word, chosen at random with the attention's
// probabilities:
//
//   p(s_t = i | s_<t, a) = alpha_ti                      (8)
//   z_t = sum_i s_ti a_i   (s_t one-hot: z_t = a_{s_t})   (9)   (times the gate beta here)
//
// The choice is a draw, not a function with a derivative: backprop cannot tell f_att which
// region would have been better. The paper maximises a lower bound of log p(y|a),
//
//   L_s = sum_s p(s|a) log p(y|s,a)                                               (10)
//   dL_s/dW = sum_s p(s|a) [ d log p(y|s,a)/dW + log p(y|s,a) d log p(s|a)/dW ]    (11)
//
// and estimates (11) from samples s~ (12): the first term is ordinary backprop through the
// chosen region; the second is the score-function (REINFORCE) term, which needs only the
// log-probability of the choice that was made. Its variance is reduced by a baseline b (a
// moving average of log p(y|s~,a)), and an entropy bonus lambda_e dH/dW keeps the attention
// from collapsing too early:
//
//   dL_s/dW ~ d log p(y|s~,a)/dW + lambda_r (log p(y|s~,a) - b) d log p(s~|a)/dW + lambda_e dH/dW
//
// How we implement it: a surrogate loss, not a custom backward. Its gradient is exactly the
// rule above (negated, since we minimise):
//
//   surrogate = -log p(y|s~,a) - lambda_r [log p(y|s~,a) - b]_detached log p(s~|a) - lambda_e H
//
// The bracket is a constant for autograd (detached), so the middle term differentiates to
// (log p - b) d log p(s~|a)/dW. Why this is unbiased: E_s[d log p(s|a)/dW] =
// sum_s p(s|a) d log p(s|a)/dW = sum_s dp(s|a)/dW = d(1)/dW = 0, so the constant b changes the
// variance but not the mean; and E_s[d log p(y|s)/dW + log p(y|s) d log p(s)/dW] is (11),
// the exact gradient of (10). tests/lessons/10 checks this by enumerating every choice.
//
// Semi-sampling (the paper's trick): with probability 0.5 an image uses the expected context
// sum_i alpha_i a_i (soft attention) for the whole caption instead of samples. We draw this
// once per image, as the paper says; the authors' code draws it once per minibatch.
//
// Sampling temperature (the authors' code has one too): lesson 10 draws s_t from
// softmax(e_t / tau) with tau = 0.05 by default, nearly always the most attended region,
// which is the region read at test time. With tau = 1 (alpha itself) the samples fall on a
// different cell from one minibatch to the next, and the decoder learns to ignore z_t
// (docs/10_hard_attention.md, "How we got here").
#include <algorithm>
#include <cmath>

#include "lesson.h"

namespace attend::lesson10 {

HardUnrolled hard_unroll(CaptionDecoder& decoder, const Tensor& regions, const CaptionBatch& batch,
                         double semi_sampling, Generator& gen, const NDArray& forced,
                         double temperature) {
  const Index images = batch.inputs.size(0), steps = batch.inputs.size(1);
  const Index count = regions.size(1);
  const DType dtype = regions.dtype();
  if (forced.defined() && forced.shape() != Shape{images, steps})
    fail("hard_unroll: forced regions must be [{}, {}], got {}", images, steps, forced.shape());

  HardUnrolled out;
  out.sampled = NDArray::zeros({images}, dtype);
  for (Index b = 0; b < images; ++b)
    out.sampled.set({b}, forced.defined() || !gen.bernoulli(semi_sampling) ? 1 : 0);
  out.samples = NDArray::full({images, steps}, -1, kInt64);
  // The rows that use alpha: 1 - sampled, as a [B, 1] column.
  Tensor expected_rows(map(out.sampled, [](auto s) { return 1 - s; }).reshape({images, 1}));

  Tensor projected = decoder.project_regions(regions);
  nn::LSTMState state = decoder.initial_state(regions);
  std::vector<Tensor> logits, alphas, log_choices, entropies;
  for (Index t = 0; t < steps; ++t) {
    Tensor previous = reshape(slice(batch.inputs, 1, t, t + 1), {images});
    Tensor scores = decoder.attention_scores(projected, state.h);  // eq 4
    Tensor alpha = softmax(scores, -1);                            // eq 5
    Tensor log_alpha = log_softmax(scores, -1);
    Tensor beta = decoder.gate(state.h);

    // s_t ~ Multinoulli(alpha_t) (eq 8), as a one-hot row; zero rows for expected images.
    // With a temperature tau != 1 the draw is from softmax(e_t / tau) instead (the policy),
    // and log p(s|a) in the REINFORCE term is that distribution's.
    Tensor log_policy = temperature == 1 ? log_alpha : log_softmax(scores / temperature, -1);
    NDArray one_hot = NDArray::zeros({images, count}, dtype);
    NDArray p = map(log_policy.data().to(kFloat64), [](auto v) { return std::exp(v); });
    for (Index b = 0; b < images; ++b) {
      if (out.sampled.at({b}) == 0) continue;
      const Index s = forced.defined()
                          ? static_cast<Index>(forced.at({b, t}))
                          : gen.categorical(std::span<const double>(
                                p.data<double>() + b * count, static_cast<std::size_t>(count)));
      if (s < 0 || s >= count) fail("hard_unroll: region {} is outside 0..{}", s, count - 1);
      one_hot.set({b, s}, 1);
      out.samples.set({b, t}, static_cast<double>(s));
    }
    Tensor chosen(one_hot);
    Tensor weights = chosen + alpha * expected_rows;                       // one-hot or alpha
    Tensor z = beta * squeeze(matmul(unsqueeze(weights, 1), regions), 1);  // eq 9
    DecoderStep step = decoder.advance(previous, z, state);

    logits.push_back(step.logits);
    alphas.push_back(alpha);
    log_choices.push_back(sum(chosen * log_policy, 1));  // log p(s_t), [B]
    entropies.push_back(-sum(alpha * log_alpha, 1));     // H[alpha_t], [B]
    state = step.state;
  }
  const Tensor& mask = batch.mask;  // padded steps are not part of the caption
  out.logits = stack(logits, 1);
  out.alphas = stack(alphas, 1);
  out.log_p_samples = sum(stack(log_choices, 1) * mask, 1);
  out.entropy = sum(stack(entropies, 1) * mask, 1);
  Tensor per_word =
      nn::cross_entropy(out.logits, batch.targets,
                        {.ignore_index = Vocabulary::kPad, .reduction = nn::Reduction::kNone});
  out.log_likelihood = -sum(per_word, 1);
  return out;
}

Tensor reinforce_surrogate(const HardUnrolled& out, double baseline, const HardOptions& options,
                           double scale) {
  // (log p(y|s~,a) - b) / scale, a constant for autograd: no gradient flows through the reward.
  Tensor advantage(
      map(out.log_likelihood.data(), [baseline, scale](auto v) { return (v - baseline) / scale; }));
  Tensor per_image = -out.log_likelihood -
                     options.reinforce_weight * advantage * out.log_p_samples -
                     options.entropy_weight * out.entropy;
  return mean(per_image);
}

double HardAttentionLoss::advantage_scale() const {
  return options_.normalise_advantage ? std::max(1.0, std::sqrt(squared_advantage_)) : 1.0;
}

CaptionLoss HardAttentionLoss::operator()(const Tensor& regions, const CaptionBatch& batch) {
  HardUnrolled out =
      hard_unroll(decoder_, regions, batch, options_.semi_sampling, gen_, {}, options_.temperature);
  // The mean log p(y|s~,a) of the images that sampled, for the baseline, and the mean squared
  // centred reward, for the variance normalisation.
  const std::vector<double> ll = out.log_likelihood.data().to_vector();
  const std::vector<double> sampled = out.sampled.to_vector();
  double sum_ll = 0, count = 0;
  for (std::size_t b = 0; b < ll.size(); ++b) {
    sum_ll += sampled[b] * ll[b];
    count += sampled[b];
  }
  auto mean_squared_advantage = [&] {
    double sum = 0;
    for (std::size_t b = 0; b < ll.size(); ++b)
      sum += sampled[b] * (ll[b] - baseline_) * (ll[b] - baseline_);
    return sum / count;
  };
  if (count > 0 && !has_baseline_) {
    baseline_ = sum_ll / count;  // start at the first minibatch's mean, not at 0
    squared_advantage_ = mean_squared_advantage();
    has_baseline_ = true;
  }
  Tensor loss = reinforce_surrogate(out, baseline_, options_, advantage_scale());
  if (count > 0) {  // b_k = 0.9 b_{k-1} + 0.1 log p(y | s~_k, a), and the same for the spread
    const double decay = options_.baseline_decay;
    squared_advantage_ = decay * squared_advantage_ + (1 - decay) * mean_squared_advantage();
    baseline_ = decay * baseline_ + (1 - decay) * sum_ll / count;
  }
  double nll = 0;
  for (double v : ll) nll -= v / static_cast<double>(ll.size());
  return {loss, nll, 0};
}

}  // namespace attend::lesson10
