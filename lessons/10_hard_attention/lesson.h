// Lesson 10: stochastic "hard" attention (Xu et al. 2015, section 4.1). The decoder of
// lesson 09 (it links lesson 09's library) reads ONE region per word, sampled from alpha,
// and is trained with REINFORCE. The functions that main.cpp runs, one file each:
//
//   hard.cpp      the sampled unroll (eqs 8-9), semi-sampling, the REINFORCE surrogate loss
//                 with the moving-average baseline and the entropy bonus (eqs 10-12)
//   compare.cpp   the measurements of the soft-versus-hard table: gradient variance,
//                 whether backprop reaches f_att, inference cost per word
#pragma once

#include <vector>

#include "lessons/09_show_attend_tell/lesson.h"

namespace attend::lesson10 {

using lesson09::CaptionBatch;
using lesson09::Decoder;

// The hyper-parameters of hard attention, with the paper's values where it gives them.
struct HardOptions {
  double semi_sampling = 0.5;   // probability that an image uses the expected context alpha
  double reinforce_weight = 1;  // lambda_r
  double entropy_weight = 0.0;  // lambda_e (the program's default, --entropy-weight)
  double baseline_decay = 0.9;  // b <- 0.9 b + 0.1 log p(y|s)
  double temperature = 1;       // tau: samples from softmax(e / tau); 1 = from alpha (the paper)
  // Variance normalisation (Mnih & Gregor 2014, NVIL): divide the centred reward
  // log p(y|s,a) - b by max(1, a moving estimate of its standard deviation), so that the
  // REINFORCE term keeps one scale while the captions' log-likelihoods shrink in training.
  bool normalise_advantage = false;
};

// What a sampled unroll computed, for B captions of T steps over L regions.
struct HardUnrolled {
  Tensor logits;          // [B, T, V]
  Tensor alphas;          // [B, T, L]
  Tensor log_likelihood;  // [B]: log p(y | s, a), summed over the caption's words
  Tensor log_p_samples;   // [B]: log p(s | a) = sum_t log alpha_{t, s_t} (0 if not sampled)
  Tensor entropy;         // [B]: sum_t H[alpha_t] over the caption's steps
  NDArray samples;        // int64 [B, T]: the sampled regions (-1 where not sampled)
  NDArray sampled;        // float [B]: 1 if the image used sampled regions, 0 if alpha
};

// Teacher-forced unroll in which each image, with probability 1 - semi_sampling, reads one
// region s_t ~ Multinoulli(alpha_t) per step (z_t = beta a_{s_t}), else the expected
// context (z_t = beta sum_i alpha_i a_i, as soft attention). `forced` [B, T] (int64), if
// defined, gives the regions instead of sampling them (every image then counts as sampled):
// the unbiasedness test uses it to enumerate every choice. With temperature tau != 1 the
// samples come from softmax(e_t / tau), and log_p_samples is their log-probability under it.
HardUnrolled hard_unroll(Decoder& decoder, const Tensor& regions, const CaptionBatch& batch,
                         double semi_sampling, Generator& gen, const NDArray& forced = {},
                         double temperature = 1);

// The REINFORCE surrogate: a loss whose gradient is minus the paper's update rule,
//   -(1/B) sum_b [ d log p(y|s,a)/dW + lambda_r (log p(y|s,a) - b) d log p(s|a)/dW
//                  + lambda_e dH/dW ],
// built as mean_b[ -log p(y|s,a) - lambda_r (log p(y|s,a) - b)_detached log p(s|a)
//                  - lambda_e H ].
// `scale` divides the centred reward (variance normalisation; 1: none).
Tensor reinforce_surrogate(const HardUnrolled& out, double baseline, const HardOptions& options,
                           double scale = 1);

// Training state of hard attention: the baseline b, a moving average of log p(y|s,a).
class HardAttentionLoss {
 public:
  HardAttentionLoss(Decoder& decoder, HardOptions options, Generator& gen)
      : decoder_(decoder), options_(options), gen_(gen) {}
  // The loss of one minibatch (updates the baseline afterwards); nll is -log p(y|s,a).
  lesson09::LossParts operator()(const Tensor& regions, const CaptionBatch& batch);
  double baseline() const { return baseline_; }
  // The divisor of the centred reward: max(1, sqrt(moving mean of (log p(y|s,a) - b)^2)), or
  // 1 without variance normalisation.
  double advantage_scale() const;

 private:
  Decoder& decoder_;
  HardOptions options_;
  Generator& gen_;
  double baseline_ = 0;
  double squared_advantage_ = 0;  // moving mean of (log p(y|s,a) - b)^2
  bool has_baseline_ = false;     // the first minibatch starts b (and the spread) at its own
};

// ---- compare.cpp: the soft-versus-hard table ---------------------------------------------

// The gradient of f_att's parameters (the attention MLP) as one flat vector.
std::vector<double> attention_gradient(Decoder& decoder);

// Spread of the gradient estimate of f_att's parameters over `draws` estimates:
// sum of per-component variances divided by the squared norm of the mean gradient.
struct GradientSpread {
  double relative_variance = 0;
  double mean_norm = 0;
};
// soft = true: the soft loss (deterministic given the batch). same_batch: every draw uses
// the first batch (only the sampling varies); otherwise each draw takes a new batch.
GradientSpread gradient_spread(Decoder& decoder, const NDArray& regions,
                               const std::vector<lesson09::CanvasExample>& canvases,
                               const lesson09::Vocabulary& vocab, bool soft, bool same_batch,
                               Index draws, Index batch_size, const HardOptions& options,
                               double lambda, Generator& gen);

// The norm of the plain backprop gradient of -log p(y|s,a) at f_att's parameters when every
// image reads a sampled region (no REINFORCE term): exactly 0 for hard attention.
double backprop_gradient_norm(Decoder& decoder, const Tensor& regions, const CaptionBatch& batch,
                              bool soft, Generator& gen);

// Greedy decoding time per generated word, in microseconds (best of `repeats`).
double microseconds_per_word(Decoder& decoder, const NDArray& regions, Index repeats);

}  // namespace attend::lesson10
