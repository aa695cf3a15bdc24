// interpret/encoder_decoder_relevance.h: the rules of Chefer et al. 2021b for an
// encoder-decoder, each on a 2-source-token, 2-target-token case worked by hand (the
// normalisation's axis included), the whole model assembled from them, the rollout baseline
// by hand, and a real backward() through lesson 11's Transformer at tiny size.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;

namespace {

// The fused maps of the hand-worked case (S = T = 2):
NDArray encoder_bar() {
  return f64({1, 1, 0, 2}, {2, 2});
}  // Ā of the encoder
NDArray decoder_bar() {
  return f64({1, 0, 1, 3}, {2, 2});
}  // Ā of the decoder (causal)
NDArray cross_bar() {
  return f64({1, 0, 0, 2}, {2, 2});
}  // Ā of the cross-attention

// The same as [1 head, rows, columns].
NDArray one_head(const NDArray& m) {
  return m.reshape({1, m.size(0), m.size(1)});
}

// The hand-worked model: one encoder layer, one decoder layer, one head, Ā = A.
EncoderDecoderAttention hand_model() {
  return {{one_head(encoder_bar())}, {one_head(decoder_bar())}, {one_head(cross_bar())}};
}

EncoderDecoderAttention filled_like(const EncoderDecoderAttention& a, double value) {
  auto fill = [value](const std::vector<NDArray>& maps) {
    std::vector<NDArray> out;
    for (const NDArray& m : maps) out.push_back(NDArray::full(m.shape(), value, kFloat64));
    return out;
  };
  return {fill(a.encoder_self), fill(a.decoder_self), fill(a.cross)};
}

}  // namespace

TEST_CASE("encoder-decoder relevance: R^ss = I, R^tt = I, R^ts = 0", "[interpret]") {
  const EncoderDecoderRelevance r = initial_relevance(3, 2);
  check_close(r.source_source, f64({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3}));
  check_close(r.target_target, f64({1, 0, 0, 1}, {2, 2}));
  check_close(r.target_source, NDArray::zeros({2, 3}, kFloat64));
}

TEST_CASE("encoder-decoder relevance: the self-attention rules by hand (eqs. 6-7)", "[interpret]") {
  EncoderDecoderRelevance r = initial_relevance(2, 2);
  // Encoder: R^ss = I + Ā I = [2 1; 0 3].
  apply_encoder_self_attention(r, encoder_bar());
  check_close(r.source_source, f64({2, 1, 0, 3}, {2, 2}));
  // Decoder, with R^ts already [1 2; 0 1] (as if an earlier layer had read the source):
  //   R^tt = I + Ā = [2 0; 1 4];  R^ts += Ā R^ts = [1 2; 1 5], so R^ts = [2 4; 1 6].
  r.target_source = f64({1, 2, 0, 1}, {2, 2});
  apply_decoder_self_attention(r, decoder_bar());
  check_close(r.target_target, f64({2, 0, 1, 4}, {2, 2}));
  check_close(r.target_source, f64({2, 4, 1, 6}, {2, 2}));
  check_close(r.source_source, f64({2, 1, 0, 3}, {2, 2}));  // the decoder leaves R^ss alone
}

TEST_CASE("encoder-decoder relevance: the normalisation divides each ROW of R - I (eqs. 8-9)",
          "[interpret]") {
  // R = [2 0; 1 4]: R - I = [1 0; 1 3], row sums 1 and 4 -> [1 0; 1/4 3/4], + I:
  check_close(normalised_self_relevance(f64({2, 0, 1, 4}, {2, 2})),
              f64({2, 0, 0.25, 1.75}, {2, 2}));
  // The slips give other numbers: the column sums (2, 3) would give [3/2 0; 1/2 2]; dividing
  // element (i, j) by row j's sum (a row sum broadcast along the wrong axis) [2 0; 1 7/4].
  // R = [2 1; 0 3]: R - I = [1 1; 0 2], both rows sum to 2:
  check_close(normalised_self_relevance(f64({2, 1, 0, 3}, {2, 2})), f64({1.5, 0.5, 0, 2}, {2, 2}));
  // A row with nothing added to it stays e_i (no 0 / 0).
  check_close(normalised_self_relevance(f64({1, 0, 0, 1}, {2, 2})), f64({1, 0, 0, 1}, {2, 2}));
  check_close(normalised_self_relevance(f64({1, 0, 1, 3}, {2, 2})),
              f64({1, 0, 1.0 / 3, 5.0 / 3}, {2, 2}));
}

TEST_CASE("encoder-decoder relevance: the cross-attention rule by hand (eq. 10)", "[interpret]") {
  EncoderDecoderRelevance r = initial_relevance(2, 2);
  r.source_source = f64({2, 1, 0, 3}, {2, 2});  // R̄^ss = [3/2 1/2; 0 2]
  r.target_target = f64({2, 0, 1, 4}, {2, 2});  // R̄^tt = [2 0; 1/4 7/4]
  EncoderDecoderRelevance plain = r;
  // Ā R̄^ss = [1 0; 0 2] [3/2 1/2; 0 2] = [3/2 1/2; 0 4];
  // (R̄^tt)^T (Ā R̄^ss) = [2 1/4; 0 7/4] [3/2 1/2; 0 4] = [3 2; 0 7].
  // (Without the transpose, R̄^tt (Ā R̄^ss) = [3 1; 3/8 57/8].) Row 1, the last target token
  // of a causal decoder, is R̄^tt[1, 1] = 7/4 times row 1 of Ā R̄^ss.
  apply_cross_attention(r, cross_bar());
  check_close(r.target_source, f64({3, 2, 0, 7}, {2, 2}));
  check_close(r.target_target, f64({2, 0, 1, 4}, {2, 2}));  // R^tt += Ā R^st adds 0
  // Not normalised: (R^tt)^T Ā R^ss = [2 1; 0 4] [2 1; 0 6] = [4 8; 0 24].
  apply_cross_attention(plain, cross_bar(), /*normalise=*/false);
  check_close(plain.target_source, f64({4, 8, 0, 24}, {2, 2}));
}

TEST_CASE("encoder-decoder relevance: the whole model is the rules in forward order",
          "[interpret]") {
  const EncoderDecoderAttention a = hand_model();
  // One head and gradients of 1: Ā = (1 * A)^+ = A, the maps of the cases above.
  check_close(encoder_decoder_relevance(a, filled_like(a, 1.0)).target_source,
              f64({3, 2, 0, 7}, {2, 2}));
  // Without gradients Ā = E_h[A]: two heads, 2A and 0, average to A.
  auto doubled = [](const NDArray& m) {
    const NDArray twice = m * 2.0;
    const std::vector<NDArray> heads{one_head(twice),
                                     NDArray::zeros({1, m.size(0), m.size(1)}, kFloat64)};
    return concat(heads, 0);
  };
  const EncoderDecoderAttention two_heads{
      {doubled(encoder_bar())}, {doubled(decoder_bar())}, {doubled(cross_bar())}};
  check_close(encoder_decoder_relevance(two_heads).target_source, f64({3, 2, 0, 7}, {2, 2}));
  // Negative gradients are clamped away: every Ā is 0, nothing reaches the source.
  const EncoderDecoderRelevance against = encoder_decoder_relevance(a, filled_like(a, -1.0));
  check_close(against.target_source, NDArray::zeros({2, 2}, kFloat64));
  check_close(against.source_source, f64({1, 0, 0, 1}, {2, 2}));

  // Two decoder layers: the second reads the first's R^ts through its self-attention.
  EncoderDecoderAttention deeper = a;
  deeper.decoder_self.push_back(one_head(f64({1, 0, 0.5, 0.5}, {2, 2})));
  deeper.cross.push_back(one_head(f64({0, 1, 1, 0}, {2, 2})));
  EncoderDecoderRelevance step = initial_relevance(2, 2);
  apply_encoder_self_attention(step, encoder_bar());
  apply_decoder_self_attention(step, decoder_bar());
  apply_cross_attention(step, cross_bar());
  apply_decoder_self_attention(step, f64({1, 0, 0.5, 0.5}, {2, 2}));
  apply_cross_attention(step, f64({0, 1, 1, 0}, {2, 2}));
  check_close(encoder_decoder_relevance(deeper).target_source, step.target_source);
}

TEST_CASE("encoder-decoder rollout baseline by hand: (R^tt)^T Ā_L R^ss", "[interpret]") {
  // Encoder A = [1/2 1/2; 0 1] -> 0.5 A + 0.5 I = [3/4 1/4; 0 1] = R^ss (one layer).
  // Decoder A = [1 0; 1/2 1/2] -> R^tt = [1 0; 1/4 3/4]. Last cross-attention [1/2 1/2; 1 0]:
  // Ā_L R^ss = [3/8 5/8; 3/4 1/4]; (R^tt)^T that = [1 1/4; 0 3/4] [..] = [9/16 11/16; 9/16 3/16].
  const EncoderDecoderAttention a{{one_head(f64({0.5, 0.5, 0, 1}, {2, 2}))},
                                  {one_head(f64({1, 0, 0.5, 0.5}, {2, 2}))},
                                  {one_head(f64({0.5, 0.5, 1, 0}, {2, 2}))}};
  check_close(encoder_decoder_rollout(a), f64({9.0 / 16, 11.0 / 16, 9.0 / 16, 3.0 / 16}, {2, 2}));
  // Only the last decoder layer's cross-attention enters: another first layer changes nothing.
  EncoderDecoderAttention deeper = a;
  deeper.decoder_self.insert(deeper.decoder_self.begin(), one_head(f64({1, 0, 0, 1}, {2, 2})));
  deeper.cross.insert(deeper.cross.begin(), one_head(f64({1, 0, 1, 0}, {2, 2})));
  check_close(encoder_decoder_rollout(deeper), encoder_decoder_rollout(a));
}

TEST_CASE("encoder-decoder relevance from a real backward() through a tiny Transformer",
          "[interpret]") {
  // Lesson 11's model at tiny size, float64; the score of target position t = 1 is one
  // logit. Its gradient reaches no decoder row after t (causality), so the relevance of row t
  // is the same read from all T positions or from the prefix 0..t alone.
  Generator gen(5);
  seq::TransformerSeq2Seq model(seq::tiny_transformer_sizes(8), gen);
  model.to(kFloat64);
  model.eval();
  const seq::Batch batch = seq::make_batch({{4, 5, 7, 6}}, {{5, 4, 6}});
  const seq::Encoded encoded = model.encode(batch.source, batch.source_mask);
  const Tensor logits = model.output_layer(model.decode_all(encoded, batch.decoder_input).features);
  auto& enc = *model.encoder_layers[0];
  auto& dec = *model.decoder_layers[0];
  for (Tensor* w :
       {&enc.self_attention_weights, &dec.self_attention_weights, &dec.cross_attention_weights})
    w->retain_grad();
  const Index t = 1;
  sum(slice(slice(logits, 1, t, t + 1), 2, 3, 4)).backward();  // y_t = logit of token 3 at t

  // [1, H, Tq, Tk] -> [H, Tq, Tk], cut to the first `rows` queries and `keys` keys.
  auto cut = [](const NDArray& x, Index rows, Index keys) {
    return slice(slice(x.reshape({x.size(1), x.size(2), x.size(3)}), 1, 0, rows), 2, 0, keys);
  };
  const Index S = batch.source.size(1), T = batch.decoder_input.size(1);
  auto maps = [&](bool gradient, Index rows) {
    auto get = [&](const Tensor& w) { return gradient ? w.grad().data() : w.data(); };
    return EncoderDecoderAttention{{cut(get(enc.self_attention_weights), S, S)},
                                   {cut(get(dec.self_attention_weights), rows, rows)},
                                   {cut(get(dec.cross_attention_weights), rows, S)}};
  };
  const EncoderDecoderAttention all = maps(false, T), all_grad = maps(true, T);
  // No gradient reaches the rows after t, in either decoder attention.
  for (const NDArray& g : {all_grad.decoder_self[0], all_grad.cross[0]})
    CHECK(squared_norm(slice(g, 1, t + 1, T)) == 0.0);
  CHECK(squared_norm(all_grad.cross[0]) > 1e-8);

  const NDArray full = encoder_decoder_relevance(all, all_grad).target_source;
  const NDArray prefix =
      encoder_decoder_relevance(maps(false, t + 1), maps(true, t + 1)).target_source;
  check_close(slice(full, 0, t, t + 1), slice(prefix, 0, t, t + 1), 1e-12);
  CHECK(squared_norm(slice(full, 0, t, t + 1)) > 1e-12);
  // Without the gradient the same rules give another map.
  const NDArray unweighted = encoder_decoder_relevance(maps(false, t + 1)).target_source;
  CHECK(squared_norm(slice(unweighted, 0, t, t + 1) - slice(prefix, 0, t, t + 1)) > 1e-8);
}

TEST_CASE("encoder-decoder relevance: errors name the function and the shapes", "[interpret]") {
  EncoderDecoderRelevance r = initial_relevance(2, 3);
  CHECK_THAT(error_message([&] {
               apply_encoder_self_attention(r, NDArray::zeros({3, 3}));
             }),
             Contains("apply_encoder_self_attention: the fused attention must be [S, S] = [2, 2], "
                      "got [3,3]"));
  CHECK_THAT(error_message([&] {
               apply_cross_attention(r, NDArray::zeros({2, 3}));
             }),
             Contains("apply_cross_attention: the fused attention must be [T, S] = [3, 2], got "
                      "[2,3]"));
  CHECK_THAT(error_message([] {
               normalised_self_relevance(NDArray::zeros({2, 3}));
             }),
             Contains("must be square [T, T], got [2,3]"));
  CHECK_THAT(error_message([] { initial_relevance(0, 2); }), Contains("initial_relevance"));
  EncoderDecoderAttention a = hand_model();
  CHECK_THAT(error_message([&] {
               encoder_decoder_relevance(a, {{}, {}, a.cross});
             }),
             Contains("the gradients must have the attention's layers and shapes"));
  a.cross.clear();
  CHECK_THAT(error_message([&] { encoder_decoder_relevance(a); }),
             Contains("as many decoder self-attention as cross-attention layers"));
}
