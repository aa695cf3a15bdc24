// The Show-Attend-and-Tell decoder (Xu et al. 2015): an LSTM that writes a caption one word
// at a time, looking at the image's regions through attention before each word; and its
// teacher-forced unroll over a batch of captions.
#pragma once

#include <string>

#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/lstm.h"
#include "nn/module.h"
#include "seq/captioning/region_encoder.h"

namespace attend::captioning {

// The defaults are the sizes of the REF-SAT model (shared/bench/ref_sat.py), lessons 09 and 10's.
struct CaptionDecoderSizes {
  Index vocab = 0;  // K
  // The size of a region vector a_i: D = 64 CNN features + 2 coordinates.
  Index features = kRegionFeatures + kPositionFeatures;
  Index embedding = 32;  // m
  Index hidden = 128;    // n, the LSTM's size
  Index attention = 64;  // the hidden layer of f_att
  // Dropout on h_t where it enters the deep output (eq 7), in training only. The authors'
  // code drops h_t there with p = 0.5, so that the output cannot lean on the LSTM's memory
  // alone and reads the context z_t too. 0 turns it off (the tests' gradchecks).
  double dropout = 0;
  // What of the context z_t the LSTM receives (eq 1). The paper feeds it all of z_t. Then a
  // decoder on our small canvases reads an object once, at the word before it ("a"),
  // remembers it, and looks anywhere while it says "red bag": its maps do not show where
  // the words come from. By default the LSTM gets only the *position* part of z_t (where it
  // looked: the last kPositionFeatures numbers), and what it saw reaches the words through
  // the deep output (eq 7) alone, so each word has to look (--lstm-sees-content: the paper).
  bool lstm_sees_content = false;
};

// What one decoding step computed (B images, L regions, V words).
struct DecoderStep {
  Tensor logits;  // [B, V]: eq. 7 before the softmax
  Tensor alpha;   // [B, L]: eq. 5
  Tensor beta;    // [B, 1]: the gate
  nn::LSTMState state;
};

class CaptionDecoder : public nn::Module {
 public:
  CaptionDecoder(const CaptionDecoderSizes& sizes, Generator& gen);

  // f_init: h_0 = tanh(init_h(mean_i a_i)), c_0 = tanh(init_c(mean_i a_i)).
  nn::LSTMState initial_state(const Tensor& regions);
  // W_a a_i + b for every region: depends only on the image, computed once per caption.
  Tensor project_regions(const Tensor& regions) { return attention.project_keys(regions); }
  // eq 4: the scores e_ti [B, L] from the projected regions and h_{t-1}.
  Tensor attention_scores(const Tensor& projected, const Tensor& h);
  // eq 5: alpha = softmax(e) [B, L]; with a keep mask [B, L] (padded_regions), the softmax
  // over the real regions only: a padded one gets exactly 0.
  Tensor attention_weights(const Tensor& projected, const Tensor& h, const Tensor& mask = {});
  // beta_t = sigmoid(f_beta(h_{t-1})) [B, 1], or 1 when the gate is off.
  Tensor gate(const Tensor& h);
  // Given the context z_t [B, D]: the LSTM step (eqs 1-3) and the deep output (eq 7).
  DecoderStep advance(const Tensor& previous_words, const Tensor& z, const nn::LSTMState& state);
  // One whole step: alpha, the context z_t, advance. With Context::kSoft (training and
  // decoding in lesson 09), z_t = beta sum_i alpha_i a_i (eq 6). Lesson 10 decodes its
  // hard-attention model with kMostAttended: z_t = beta a_k, k = argmax_i alpha_i (one region).
  enum class Context { kSoft, kMostAttended };
  DecoderStep step(const Tensor& regions, const Tensor& projected, const Tensor& previous_words,
                   const nn::LSTMState& state);

  // The parameters the model computes with: all of them, but f_beta's when the gate is off
  // (beta = 1 then, and f_beta is never used).
  Index parameters_used() const;

  std::string describe() const override { return "CaptionDecoder"; }

  CaptionDecoderSizes sizes;
  bool use_gate = true;  // --no-gate: beta = 1 (exercise)
  // --no-init: f_init reads zeros instead of the mean region, so that everything the decoder
  // learns about the image comes through attention.
  bool init_from_image = true;
  // Object regions (object_regions.h) come padded with all-zero vectors to the same count L:
  // with this on, a region that is all zeros is padding and gets exactly 0 attention (a
  // masked softmax). Off (lessons 09, 10): every region is real. f_init still divides by L,
  // padding included: (1/L) sum of the real regions also says how many there are, which a
  // mean over the real ones alone hides (one bag looks like two bags side by side; lesson 14
  // measured exact match 79.4% with that mean against 91.2%, docs/14 section 7).
  bool padded_regions = false;
  Context context = Context::kSoft;
  nn::Embedding embed;  // E
  nn::Linear init_h, init_c;
  nn::AdditiveScore attention;  // f_att: u^T tanh(W_a a_i + W_h h_{t-1} + b)
  nn::Linear f_beta;
  nn::LSTMCell cell;               // input [E y_{t-1}; z_t]
  nn::Linear out_h, out_z, out_o;  // L_h, L_z, L_o of eq 7
  nn::Dropout drop_h;              // on h_t before L_h
};

// Teacher forcing over a whole batch of captions: step t is given the true word y_{t-1}.
struct UnrolledCaptions {
  Tensor logits;  // [B, T, V]
  Tensor alphas;  // [B, T, L]
  Tensor betas;   // [B, T]
};
UnrolledCaptions unroll(CaptionDecoder& decoder, const Tensor& regions, const Tensor& inputs);

}  // namespace attend::captioning
