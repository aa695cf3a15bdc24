// Section 1 of the program: RNNsearch's equations, its parameters, and a float64 gradcheck of
// the whole model with the invariants of its attention weights.
#include "lesson.h"

namespace attend::lesson07 {

void describe_model(app::Transcript& t, seq::AttentionSeq2Seq& model, const Options& o) {
  t.heading("1. RNNsearch: a decoder that attends");
  t.say("annotations  h_j = [h_fwd_j; h_bwd_j]  (bidirectional GRU, n = {} each way)      eq. 7\n",
        o.hidden);
  t.say("start        s_0 = tanh(W_s h_bwd_1)                                      A.2.2\n");
  t.say("score        e_ij = {}                eq. 6, A.1.2\n",
        model.scoring() == seq::Scoring::kAdditive
            ? "v^T tanh(W s_(i-1) + U h_j)  (n' = " + std::to_string(o.attention) + ")"
            : "s_(i-1)^T W h_j  (general)             ");
  t.say("weights      alpha_ij = softmax_j(e_ij) over the real input positions         eq. 6\n");
  t.say("context      c_i = sum_j alpha_ij h_j                                         eq. 5\n");
  if (model.readout_kind() == seq::Readout::kMaxout)
    t.say(
        "output       t~_i = U_o s_(i-1) + V_o E y_(i-1) + C_o c_i   ({} units)     A.2.2\n"
        "             t_i = maxout(t~_i) ({} units), p(y_i | y_<i, x) = softmax(W_o t_i)   eq. 4\n",
        2 * o.maxout, o.maxout);
  else
    t.say("output       p(y_i | y_<i, x) = softmax(W_o [s_i; c_i; E y_(i-1)] + b_o)      eq. 4\n");
  t.say("state        s_i = GRU([E y_(i-1); c_i], s_(i-1))                             A.2.2\n");
  t.say("{}", model.summary());

  // The whole model in float64 at tiny sizes: its gradient, and its attention weights.
  Generator gen(o.seed);
  seq::AttentionSeq2Seq tiny({.source_vocabulary = 8,
                              .target_vocabulary = 8,
                              .embedding = 3,
                              .hidden = 4,
                              .attention = 5,
                              .maxout = 3},
                             model.scoring(), model.readout_kind(), gen);
  tiny.to(kFloat64);
  const seq::Batch batch = seq::tiny_batch(8);
  t.say(
      "\ngradcheck of the whole model at vocab 8, m = 3, n = 4, n' = 5, l = 3, on 2 padded "
      "sentences:\n"
      "  {}\n",
      seq::gradcheck_model(tiny, batch).report);
  const interpret::AttentionInvariants inv =
      interpret::check_attention(seq::teacher_forced(tiny, batch).weights, batch.source_mask);
  t.say(
      "its attention: {} rows, largest |sum_j alpha_ij - 1| = {:.1e}; {} padded positions,\n"
      "largest weight there = {} (exactly 0: exp(-inf))\n",
      inv.rows, inv.largest_row_sum_error, inv.masked_positions, inv.largest_masked_weight);
}

}  // namespace attend::lesson07
