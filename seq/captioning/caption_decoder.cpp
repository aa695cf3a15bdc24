// The decoder: an LSTM that writes the caption one word at a time, looking at the image
// through attention before each word. Equation numbers are those of Xu et al. (2015).
//
// Step t, given the regions a_1 .. a_L, the previous word y_{t-1} and the state (h, c):
//
//   e_ti   = f_att(a_i, h_{t-1}) = u^T tanh(W_a a_i + W_h h_{t-1} + b)        (4)
//   alpha_t = softmax_i(e_t)                                                 (5)
//   beta_t = sigmoid(f_beta(h_{t-1}))                  the gate (section 4.2.1)
//   z_t    = phi({a_i}, {alpha_ti}) = beta_t sum_i alpha_ti a_i              (6), soft
//   (h_t, c_t) = LSTM([E y_{t-1}; z_t], (h_{t-1}, c_{t-1}))                   (1)-(3)
//                (by default only z_t's last two numbers, where it looked: see caption_decoder.h)
//   p(y_t)  = softmax(L_o(E y_{t-1} + L_h h_t + L_z z_t))                    (7)
//             (in training, h_t goes through dropout first, as in the authors' code)
//
// The LSTM's input and recurrent weights together are the affine map T_{D+m+n,4n} of eq. 1
// (nn/lstm.h stacks the gates i, f, g, o as PyTorch does).
#include "seq/captioning/caption_decoder.h"

#include <cmath>

#include "autograd/ops.h"
#include "seq/captioning/object_regions.h"

namespace attend::captioning {

CaptionDecoder::CaptionDecoder(const CaptionDecoderSizes& s, Generator& gen)
    : sizes(s),
      embed(s.vocab, s.embedding, nn::kNoPadding, gen),
      init_h(s.features, s.hidden, true, gen),
      init_c(s.features, s.hidden, true, gen),
      attention(s.hidden, s.features, s.attention, gen),
      f_beta(s.hidden, 1, true, gen),
      cell(s.embedding + (s.lstm_sees_content ? s.features : kPositionFeatures), s.hidden, gen),
      out_h(s.hidden, s.embedding, true, gen),
      out_z(s.features, s.embedding, true, gen),
      out_o(s.embedding, s.vocab, true, gen),
      drop_h(s.dropout, gen) {
  register_module("embed", embed);
  register_module("init_h", init_h);
  register_module("init_c", init_c);
  register_module("attention", attention);
  register_module("f_beta", f_beta);
  register_module("cell", cell);
  register_module("out_h", out_h);
  register_module("out_z", out_z);
  register_module("out_o", out_o);
  register_module("drop_h", drop_h);
}

// The paper's f_init: two MLPs of the mean annotation (section 3.1.2).
nn::LSTMState CaptionDecoder::initial_state(const Tensor& regions) {
  // (1/L) sum_i a_i, [B, D]. With padded regions, L counts the padding (zero vectors) too:
  // the sum of the real regions over a fixed L, which says how many there are (see
  // padded_regions in caption_decoder.h).
  Tensor mean_region = mean(regions, 1);
  if (!init_from_image) mean_region = zeros_like(mean_region);
  return {tanh(init_h(mean_region)), tanh(init_c(mean_region))};
}

Tensor CaptionDecoder::attention_scores(const Tensor& projected, const Tensor& h) {
  return squeeze(attention.score(unsqueeze(h, 1), projected), 1);  // eq 4: [B, L]
}

Tensor CaptionDecoder::attention_weights(const Tensor& projected, const Tensor& h,
                                         const Tensor& mask) {
  if (mask.defined()) return nn::masked_softmax(attention_scores(projected, h), mask);
  return softmax(attention_scores(projected, h), -1);  // eq 5
}

namespace {

// A constant one-hot [B, L] row per image, 1 at the most attended region.
Tensor most_attended(const Tensor& alpha) {
  const NDArray best = argmax(alpha, -1).data();
  NDArray one_hot = NDArray::zeros(alpha.shape(), alpha.dtype());
  for (Index b = 0; b < alpha.size(0); ++b) one_hot.set({b, best.data<std::int64_t>()[b]}, 1);
  return Tensor(one_hot);
}

}  // namespace

Index CaptionDecoder::parameters_used() const {
  return parameter_count() - (use_gate ? 0 : f_beta.parameter_count());
}

Tensor CaptionDecoder::gate(const Tensor& h) {
  if (!use_gate) return ones({h.size(0), 1}, h.dtype());
  return sigmoid(f_beta(h));
}

DecoderStep CaptionDecoder::advance(const Tensor& previous_words, const Tensor& z,
                                    const nn::LSTMState& state) {
  Tensor embedded = embed(previous_words);  // E y_{t-1}, [B, m]
  // eqs 1-3, with all of z_t (the paper) or only where the decoder looked (our default)
  const Tensor lstm_context =
      sizes.lstm_sees_content ? z : slice(z, 1, z.size(1) - kPositionFeatures, z.size(1));
  nn::LSTMState next = cell(concat({embedded, lstm_context}, 1), state);
  Tensor deep = embedded + out_h(drop_h(next.h)) + out_z(z);  // eq 7, inside L_o(...)
  return {out_o(deep), Tensor(), Tensor(), next};
}

DecoderStep CaptionDecoder::step(const Tensor& regions, const Tensor& projected,
                                 const Tensor& previous_words, const nn::LSTMState& state) {
  const Tensor mask = padded_regions ? region_mask(regions) : Tensor();
  Tensor alpha = attention_weights(projected, state.h, mask);  // [B, L]
  Tensor beta = gate(state.h);                                 // [B, 1]
  Tensor weights = context == Context::kSoft ? alpha : most_attended(alpha);
  Tensor z = beta * squeeze(matmul(unsqueeze(weights, 1), regions), 1);  // eq 6 with the gate
  DecoderStep out = advance(previous_words, z, state);
  out.alpha = alpha;
  out.beta = beta;
  return out;
}

UnrolledCaptions unroll(CaptionDecoder& decoder, const Tensor& regions, const Tensor& inputs) {
  const Index batch = inputs.size(0), steps = inputs.size(1);
  Tensor projected = decoder.project_regions(regions);
  nn::LSTMState state = decoder.initial_state(regions);
  std::vector<Tensor> logits, alphas, betas;
  for (Index t = 0; t < steps; ++t) {
    Tensor previous = reshape(slice(inputs, 1, t, t + 1), {batch});
    DecoderStep out = decoder.step(regions, projected, previous, state);
    logits.push_back(out.logits);
    alphas.push_back(out.alpha);
    betas.push_back(out.beta);
    state = out.state;
  }
  return {stack(logits, 1), stack(alphas, 1), squeeze(stack(betas, 1), 2)};
}

}  // namespace attend::captioning
