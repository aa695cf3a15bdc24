// Lesson 05: scoring functions. The functions that main.cpp runs, in the order of the
// chapter (docs/05_scoring.md), one file each:
//
//   scorer.cpp     (a) the four scores behind one interface: dot, scaled dot, general
//                      (bilinear) and additive (Bahdanau), and a worked example of each and
//                      of the masked softmax
//   entropy.cpp    (b) why Vaswani et al. divide by sqrt(d): the entropy of the softmax of
//                      random dot-product scores as the key size d grows
//   pitfall.cpp    (c) the dimension pitfall: a dot product needs equal query and key sizes
//   matching.cpp   (d) a small learning task, find the key a query was made from, that
//                      compares the scores by accuracy (--score picks one)
//   exercises.cpp      the reference solution of exercise 5 (a cosine score)
//   worked_example_report.cpp  section 1 of the program: the worked example, printed
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson05 {

// ---- (a) the scores: scorer.cpp ------------------------------------------------------------

enum class ScoreKind { kDot, kScaledDot, kGeneral, kAdditive };
// "dot", "scaled", "general", "additive": the names --score accepts.
std::string score_name(ScoreKind kind);
ScoreKind parse_score(const std::string& name);
std::vector<ScoreKind> all_scores();

// One of the four scoring functions of nn/attention.h, chosen when it is made:
//   dot       q . k                    no parameters, needs Dq == Dk
//   scaled    q . k / sqrt(Dk)         no parameters, needs Dq == Dk
//   general   q^T W k                  W [Dq, Dk]
//   additive  v^T tanh(W q + U k + b)  hidden size A
// Only the parameters of the chosen score are registered.
class Scorer : public nn::Module {
 public:
  Scorer(ScoreKind kind, Index query_size, Index key_size, Index hidden, Generator& gen);
  // queries [B, Tq, Dq], keys [B, Tk, Dk] -> scores [B, Tq, Tk]
  Tensor forward(const Tensor& queries, const Tensor& keys);
  std::string describe() const override;

  ScoreKind kind;
  nn::GeneralScore general;
  nn::AdditiveScore additive;
};

// A small example to compute by hand: two queries and four keys of size 3, the last key
// masked out (padding).
struct WorkedExample {
  Tensor queries;  // [1, 2, 3]
  Tensor keys;     // [1, 4, 3]
  Tensor values;   // [1, 4, 2]
  Tensor mask;     // [1, 4]: 1 1 1 0
};
WorkedExample worked_example();
// Section 1 of the program (worked_example_report.cpp): every score and the masked softmax on
// the worked example, printed to the transcript.
void report_worked_example(app::Transcript& t, std::uint64_t seed);
// The general score's W of the worked example: diag(1, 2, -1), so q^T W k is easy to check.
void set_worked_general_weights(Scorer& general);

// ---- (b) the entropy experiment: entropy.cpp ------------------------------------------------

// The mean over rows of -sum_k p_k log p_k (with 0 log 0 = 0), for weights [..., Tk].
double mean_entropy(const NDArray& weights);

struct EntropyPoint {
  Index size = 0;                           // d
  double unscaled = 0, scaled = 0;          // mean softmax entropy, in nats
  double unscaled_std = 0, scaled_std = 0;  // standard deviation of the scores
  double unscaled_top = 0, scaled_top = 0;  // mean largest weight of a row
  // The mean trace of the softmax's Jacobian, 1 - sum_k p_k^2: how much gradient it passes.
  double unscaled_slope = 0, scaled_slope = 0;
};
// `queries` random queries q ~ N(0, I_d), each against its own `keys` random keys k ~ N(0, I_d).
EntropyPoint entropy_at(Index size, Index keys, Index queries, Generator& gen);

// ---- (c) the dimension pitfall: pitfall.cpp -------------------------------------------------

struct PitfallDemo {
  std::string dot_error;                  // what dot_score says about mismatched sizes
  Shape general_scores, additive_scores;  // the shapes they return instead
  Index general_parameters = 0, additive_parameters = 0;
};
PitfallDemo dimension_pitfall(Index query_size, Index key_size, Index hidden, Generator& gen);

// ---- (d) the matching task: matching.cpp ----------------------------------------------------

// Each example has between min_keys and max_keys real keys k_j ~ N(0, I) (the rest of the
// max_keys slots is padding, filled with random vectors too, so that an ignored mask shows)
// and one query made from a random real key: q = P k_target + noise * N(0, I), with a
// fixed random P [Dq, Dk] that the model does not know. The task: point at k_target.
struct MatchingTask {
  Index max_keys = 8;
  Index min_keys = 4;
  Index query_size = 16;
  Index key_size = 16;
  double noise = 0.1;
  bool mixed = true;  // false: P = I, the query is a noisy copy of its key (needs Dq == Dk)
};

struct MatchingBatch {
  Tensor queries;  // [B, 1, Dq]
  Tensor keys;     // [B, max_keys, Dk]
  Tensor mask;     // [B, max_keys]: 1 real key, 0 padding
  Tensor targets;  // int64 [B]: the slot of k_target
};

// P with entries N(0, 1/Dk), so that P k has entries of variance about 1; the identity when
// task.mixed is false.
NDArray make_mixing_matrix(const MatchingTask& task, Generator& gen);
MatchingBatch draw_matching_batch(const MatchingTask& task, const NDArray& mixing, Index batch,
                                  Generator& gen, DType dtype = kFloat32);

// Cross-entropy of the scores against the target slot; padding slots get the score -inf,
// i.e. probability exactly 0, as in masked_softmax.
Tensor matching_loss(Scorer& scorer, const MatchingBatch& batch);
// Share of examples whose highest-scoring real key is the target.
double matching_accuracy(Scorer& scorer, const MatchingBatch& batch);
// The mean attention weight (masked softmax of the scores) that the target key gets: how
// sure the attention is, which the argmax above does not see.
double mean_target_weight(Scorer& scorer, const MatchingBatch& batch);
// The expected accuracy of a uniformly random pick among the real keys.
double chance_accuracy(const MatchingBatch& batch);

struct MatchingTraining {
  int steps = 1500;
  Index batch = 64;
  double lr = 1e-2;
  int eval_every = 100;
};
struct MatchingCurve {
  std::vector<double> steps, accuracies;  // test accuracy every eval_every steps
  std::vector<double> losses;             // training loss of every step
};
// Adam on matching_loss with a fresh batch every step; a scorer without parameters (dot,
// scaled) has nothing to learn and is only evaluated.
MatchingCurve train_matching(Scorer& scorer, const MatchingTask& task, const NDArray& mixing,
                             const MatchingBatch& test, const MatchingTraining& options,
                             Generator& gen);

// ---- exercise 5: exercises.cpp -------------------------------------------------------------

// The cosine score tau q . k / (|q| |k|): a dot product of unit vectors, so it lies in
// [-tau, tau] whatever the size d. queries [B, Tq, D], keys [B, Tk, D] -> [B, Tq, Tk].
Tensor cosine_score(const Tensor& queries, const Tensor& keys, double temperature);

}  // namespace attend::lesson05
