// Decoding: turning the model's next-token scores into an output sequence, greedily or by
// beam search.
#pragma once

#include <vector>

#include "seq/model.h"

namespace attend::seq {

struct Decoded {
  TokenIds tokens;  // the output, without <bos> and <eos>
  // The attention weights alpha_i over the S source positions (padding included, where they
  // are 0) for each output token, <eos> included; empty without attention.
  std::vector<std::vector<double>> weights;
  double log_probability = 0;  // log p(tokens, <eos> | x)
  bool finished = false;       // ended with <eos> (not cut at max_length)
};

// At every step the most probable token, fed back as the next input; all B sentences of the
// batch at once, until each has produced <eos> or max_length tokens.
std::vector<Decoded> greedy_decode(Seq2SeqModel& model, const Tensor& source, const Tensor& mask,
                                   Index max_length);

struct BeamOptions {
  Index width = 5;
  Index max_length = 50;
  // A finished hypothesis is ranked by log p / length^length_penalty (length counts <eos>):
  // 0 ranks by log p alone, which favours short outputs (every token lowers log p); 1
  // ranks by the mean log-probability per token.
  double length_penalty = 1.0;
};

// Beam search for one sentence (source [1, S]): keeps the `width` most probable partial
// outputs, extends each by every token, keeps the best `width` again; a hypothesis that
// produces <eos> is set aside as finished. Stops when `width` hypotheses have finished (or
// at max_length) and returns the best finished one. Width 1 is greedy decoding.
Decoded beam_search(Seq2SeqModel& model, const Tensor& source, const Tensor& mask,
                    const BeamOptions& options);

}  // namespace attend::seq
