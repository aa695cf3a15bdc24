// (a) Four ways to score a key against a query. Attention turns scores into weights with a
// softmax over the keys, so a score only has to say "how well does this key answer this
// query"; the four differ in how much of that they learn:
//
//   dot       a(q, k) = q . k                 (Luong et al. 2015, "dot")
//   scaled    a(q, k) = q . k / sqrt(d)       (Vaswani et al. 2017, eq. 1)
//   general   a(q, k) = q^T W k               (Luong et al. 2015, "general"; bilinear)
//   additive  a(q, k) = v^T tanh(W q + U k)   (Bahdanau et al. 2015, appendix A.1.2)
//
// The formulas live in nn/attention.cpp; this class only picks one of them, so that the
// lesson's experiments can switch scores with a flag.
#include "lesson.h"

namespace attend::lesson05 {

std::string score_name(ScoreKind kind) {
  switch (kind) {
    case ScoreKind::kDot:
      return "dot";
    case ScoreKind::kScaledDot:
      return "scaled";
    case ScoreKind::kGeneral:
      return "general";
    case ScoreKind::kAdditive:
      return "additive";
  }
  return "?";
}

std::vector<ScoreKind> all_scores() {
  return {ScoreKind::kDot, ScoreKind::kScaledDot, ScoreKind::kGeneral, ScoreKind::kAdditive};
}

ScoreKind parse_score(const std::string& name) {
  for (ScoreKind kind : all_scores())
    if (score_name(kind) == name) return kind;
  fail("unknown score '{}': use dot, scaled, general or additive", name);
}

Scorer::Scorer(ScoreKind kind_, Index query_size, Index key_size, Index hidden, Generator& gen)
    : kind(kind_), general(query_size, key_size, gen), additive(query_size, key_size, hidden, gen) {
  if (kind == ScoreKind::kGeneral) register_module("general", general);
  if (kind == ScoreKind::kAdditive) register_module("additive", additive);
}

Tensor Scorer::forward(const Tensor& queries, const Tensor& keys) {
  switch (kind) {
    case ScoreKind::kDot:
      return nn::dot_score(queries, keys);
    case ScoreKind::kScaledDot:
      return nn::scaled_dot_score(queries, keys);
    case ScoreKind::kGeneral:
      return general.forward(queries, keys);
    case ScoreKind::kAdditive:
      return additive.forward(queries, keys);
  }
  fail("Scorer: unknown kind");
}

std::string Scorer::describe() const {
  return fmt::format("Scorer({})", score_name(kind));
}

WorkedExample worked_example() {
  WorkedExample e;
  e.queries = tensor({1, 0, 1,   // q0
                      0, 2, 0},  // q1
                     {1, 2, 3}, kFloat64);
  e.keys = tensor({1, 1, 0,   // k0
                   0, 1, 1,   // k1
                   2, 0, 0,   // k2
                   1, 1, 1},  // k3, padding
                  {1, 4, 3}, kFloat64);
  // The padding's value is large, so that a leak through the mask would show in the context.
  e.values = tensor({1, 0, 0, 1, 1, 1, 50, 50}, {1, 4, 2}, kFloat64);
  e.mask = tensor({1, 1, 1, 0}, {1, 4}, kFloat64);
  return e;
}

void set_worked_general_weights(Scorer& general) {
  // key_projection computes W k with W [Dq, Dk]; q . (W k) = q^T W k.
  general.general.key_projection.weight.data() =
      NDArray::from_list({1, 0, 0, 0, 2, 0, 0, 0, -1}, {3, 3}, kFloat64);
}

}  // namespace attend::lesson05
