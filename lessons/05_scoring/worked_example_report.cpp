// Section 1 of the program: the four scores and the masked softmax on a worked example small
// enough to check by hand (worked_example() in scorer.cpp), printed.
#include <fmt/ranges.h>

#include "lesson.h"

namespace attend::lesson05 {
namespace {

// The additive score's hidden size here (its weights come from the seed).
constexpr Index kWorkedHidden = 4;

// Row q of example b of scores or weights [B, Q, K], as "[0.500, 3.000, ...]".
std::string row_text(const NDArray& m, Index b, Index q, int digits = 3) {
  std::vector<std::string> cells;
  for (Index k = 0; k < m.size(2); ++k)
    cells.push_back(fmt::format("{:.{}f}", m.at({b, q, k}), digits));
  return fmt::format("[{}]", fmt::join(cells, ", "));
}

}  // namespace

void report_worked_example(app::Transcript& t, std::uint64_t seed) {
  t.heading("1. Four scores and the masked softmax, on numbers you can check");
  WorkedExample e = worked_example();
  t.say(
      "queries q0 = (1, 0, 1), q1 = (0, 2, 0); keys k0 = (1, 1, 0), k1 = (0, 1, 1),\n"
      "k2 = (2, 0, 0), k3 = (1, 1, 1); mask (1, 1, 1, 0): k3 is padding.\n\n");
  Generator gen(seed);
  for (ScoreKind kind : all_scores()) {
    Scorer scorer(kind, 3, 3, kWorkedHidden, gen);
    scorer.to(kFloat64);
    if (kind == ScoreKind::kGeneral) set_worked_general_weights(scorer);
    NoGradGuard no_graph;
    NDArray s = scorer.forward(e.queries, e.keys).data();
    const char* formula = kind == ScoreKind::kDot         ? "q . k"
                          : kind == ScoreKind::kScaledDot ? "q . k / sqrt(3)"
                          : kind == ScoreKind::kGeneral   ? "q^T W k, W = diag(1, 2, -1)"
                                                          : "v^T tanh(W q + U k + b), A = 4";
    t.say("{:<9} {:<30} q0: {}\n{:<40} q1: {}\n", score_name(kind), formula, row_text(s, 0, 0), "",
          row_text(s, 0, 1));
  }

  NoGradGuard no_graph;
  Tensor scores = nn::dot_score(e.queries, e.keys);
  nn::Attended plain = nn::attend(scores, e.values);
  nn::Attended masked = nn::attend(scores, e.values, e.mask);
  NDArray w = masked.weights.data();
  t.say("\nsoftmax of the dot scores, no mask:  q0: {}\n", row_text(plain.weights.data(), 0, 0, 4));
  t.say("masked softmax:                      q0: {}\n", row_text(w, 0, 0, 4));
  t.say("                                     q1: {}\n", row_text(w, 0, 1, 4));
  t.say("weight of the padding k3: {} and {} (== 0.0: {}); row sums {:.15f} and {:.15f}\n",
        w.at({0, 0, 3}), w.at({0, 1, 3}), w.at({0, 0, 3}) == 0.0 && w.at({0, 1, 3}) == 0.0,
        w.at({0, 0, 0}) + w.at({0, 0, 1}) + w.at({0, 0, 2}) + w.at({0, 0, 3}),
        w.at({0, 1, 0}) + w.at({0, 1, 1}) + w.at({0, 1, 2}) + w.at({0, 1, 3}));
  t.say("context of q0 (values v0..v2 = (1,0), (0,1), (1,1), padding v3 = (50,50)):\n");
  t.say("  without the mask ({:.4f}, {:.4f}): the padding leaks in; with it ({:.4f}, {:.4f})\n",
        plain.context.data().at({0, 0, 0}), plain.context.data().at({0, 0, 1}),
        masked.context.data().at({0, 0, 0}), masked.context.data().at({0, 0, 1}));
  NDArray none = nn::masked_softmax(scores, tensor({0, 0, 0, 0}, {1, 4}, kFloat64)).data();
  t.say("a row whose keys are all masked gets all zeros, not NaN: {}\n", row_text(none, 0, 0, 1));
}

}  // namespace attend::lesson05
