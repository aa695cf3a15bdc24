// Section 1 of the program: the Transformer's equations with this run's sizes, its
// parameters, and a float64 gradcheck of a tiny model of the same kind. Also the sizes and
// the learning-rate schedule the flags ask for.
#include <cmath>

#include "lesson.h"

namespace attend::lesson11 {

seq::TransformerSizes transformer_sizes(const seq::DateTask& task, const Options& o) {
  return {.source_vocabulary = task.source_vocabulary.size(),
          .target_vocabulary = task.target_vocabulary.size(),
          .d_model = o.d_model,
          .heads = o.heads,
          .layers = o.layers,
          .feedforward = o.feedforward,
          .max_length = 64,  // the longest date is 40 characters
          .dropout = o.dropout,
          .norm_first = o.norm_first,
          .positions = seq::parse_positions(o.positions),
          .tie_output = o.tie};
}

optim::Schedule learning_rate_schedule(const Options& o) {
  const double peak = o.lr;
  if (o.schedule == "constant") return [peak](std::int64_t) { return peak; };
  if (o.schedule == "warmup") return optim::LinearWarmup(peak, o.warmup);
  // Eq. 3, lrate = factor d^-0.5 min(n^-0.5, n warmup^-1.5), with the factor that puts its
  // peak (at n = warmup, factor (d warmup)^-0.5) at --lr.
  const double factor = peak * std::sqrt(static_cast<double>(o.d_model * o.warmup));
  return optim::NoamSchedule(o.d_model, o.warmup, factor);
}

void describe_model(app::Transcript& t, seq::TransformerSeq2Seq& model, const Options& o) {
  t.heading("1. The Transformer: attention and nothing else");
  const Index dk = o.d_model / o.heads;
  t.say(
      "attention     Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V,  d_k = {}         eq. 1\n",
      dk);
  t.say("heads         MultiHead(Q, K, V) = Concat(head_1 .. head_{}) W^O,\n", o.heads);
  t.say("              head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)                   3.2.2\n");
  t.say("positions     {}\n",
        o.positions == "sinusoidal"
            ? "PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)      3.5"
        : o.positions == "learned" ? "a learned vector per position (GPT-2)"
                                   : "none: attention sees the input as a set");
  t.say("input         E x * sqrt(d_model) + PE,  d_model = {}                           3.4\n",
        o.d_model);
  t.say("each layer    {}  (N = {} encoder + {} decoder layers)\n",
        o.norm_first ? "x = x + Sublayer(LayerNorm(x))  (pre-norm)"
                     : "x = LayerNorm(x + Sublayer(x))  (post-norm, the paper)",
        o.layers, o.layers);
  t.say("feed-forward  FFN(x) = max(0, x W_1 + b_1) W_2 + b_2,  d_ff = {}            eq. 2\n",
        o.feedforward);
  t.say("decoder       masked (causal) self-attention, then attention to the encoder's output\n");
  t.say("{}", model.summary());

  Generator gen(o.seed);
  seq::TransformerSizes tiny = seq::tiny_transformer_sizes(8);
  tiny.norm_first = o.norm_first;
  tiny.positions = seq::parse_positions(o.positions);
  seq::TransformerSeq2Seq small(tiny, gen);
  small.to(kFloat64);
  t.say(
      "\ngradcheck of the whole model at vocabulary 8, d_model 8, 2 heads, 1+1 layers, d_ff 12,\n"
      "on 2 padded sentences (float64, eps 1e-6, atol 1e-5, rtol 1e-3):\n  {}\n",
      seq::gradcheck_model(small, seq::tiny_batch(8)).report);
}

}  // namespace attend::lesson11
