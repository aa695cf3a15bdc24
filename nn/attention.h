// Attention: score every key against a query, turn the scores into weights with a (masked)
// softmax, and return the weighted sum of the values.
//
//   scores [B, Tq, Tk] = score(queries [B, Tq, Dq], keys [B, Tk, Dk])
//   weights            = masked_softmax(scores, mask)       each row sums to 1
//   context [B, Tq, Dv] = weights @ values [B, Tk, Dv]
//
// The scoring functions of the course:
//   dot          q . k                      (Luong et al. 2015), needs Dq == Dk
//   scaled dot   q . k / sqrt(D)            (Vaswani et al. 2017, eq. 1)
//   general      q^T W k                    (Luong et al. 2015, "general")
//   additive     v^T tanh(W q + U k)        (Bahdanau et al. 2015, appendix A.1.2)
//
// Masks are "keep" masks: 1 where a key is real, 0 where it is padding, shaped [B, Tk]
// (or anything that broadcasts to [B, Tq, Tk]). A masked key gets weight exactly 0.
#pragma once

#include "nn/linear.h"
#include "nn/module.h"

namespace attend::nn {

// Softmax over the last axis that gives exactly 0 to masked positions; a row whose keys are
// all masked gets all zeros. An undefined mask masks nothing.
Tensor masked_softmax(const Tensor& scores, const Tensor& mask);

// [B, Tq, D] x [B, Tk, D] -> [B, Tq, Tk]. Throws if the query and key sizes differ: dot
// products need equal sizes (use GeneralScore or AdditiveScore, which project).
Tensor dot_score(const Tensor& queries, const Tensor& keys);
Tensor scaled_dot_score(const Tensor& queries, const Tensor& keys);

// q^T W k with W [Dq, Dk]: query and key sizes may differ.
class GeneralScore : public Module {
 public:
  GeneralScore(Index query_size, Index key_size, Generator& gen = default_generator());
  Tensor forward(const Tensor& queries, const Tensor& keys);
  std::string describe() const override;

  Linear key_projection;  // k -> W k, [Dk] -> [Dq], no bias
};

// v^T tanh(W q + U k), an MLP with one hidden layer of `hidden` units. U k does not depend
// on the query, so a decoder computes project_keys() once per sentence and score() at every
// step (Bahdanau et al. 2015, appendix A.1.2).
class AdditiveScore : public Module {
 public:
  AdditiveScore(Index query_size, Index key_size, Index hidden,
                Generator& gen = default_generator());
  Tensor forward(const Tensor& queries, const Tensor& keys) {
    return score(queries, project_keys(keys));
  }
  Tensor project_keys(const Tensor& keys);                            // [B,Tk,Dk] -> [B,Tk,A]
  Tensor score(const Tensor& queries, const Tensor& projected_keys);  // -> [B,Tq,Tk]
  std::string describe() const override;

  Linear query_projection;  // W: [Dq] -> [A], no bias
  Linear key_projection;    // U: [Dk] -> [A], with bias (the paper's biases are folded here)
  Linear to_score;          // v: [A] -> [1], no bias
};

struct Attended {
  Tensor context;  // [B, Tq, Dv]
  Tensor weights;  // [B, Tq, Tk], rows sum to 1 (0 at masked keys)
};

// weights = masked_softmax(scores, mask); context = weights @ values.
Attended attend(const Tensor& scores, const Tensor& values, const Tensor& mask = {});

}  // namespace attend::nn
