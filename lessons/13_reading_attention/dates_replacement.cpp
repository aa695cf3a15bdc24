// Dates 4: "Attention is not explanation" (Jain & Wallace 2019), measured. If other attention
// weights gave the same outputs, the weights the model computed could hardly explain them.
// At inference, a weights hook replaces every row of the cross-attention (every head, in
// every decoder layer or in the last one only) by
//   (i)   a random permutation of the row over the date's real (unpadded) characters,
//   (ii)  the uniform distribution over them,
//   (iii) another date's row: the same head and step of the next date in the batch, cut to
//         this date's characters and renormalised (an "adversarial" map that is some
//         date's real attention, not an optimised one),
// and reports how often the output changes, beside how far the weights moved: the mean total
// variation distance TVD(p, q) = 1/2 sum_j |p_j - q_j| (0 to 1) and the Jensen-Shannon
// divergence JSD(p, q) = 1/2 KL(p || m) + 1/2 KL(q || m), m = (p + q) / 2 (0 to ln 2 nats),
// over every row the hook replaced (the rows of dates already finished included).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dates.h"

namespace attend::lesson13 {
namespace {

// The permutations' generator: --seed plus this.
constexpr std::uint64_t kPermutationSeed = 1302;

// The new row of date b (real: its unpadded positions) from w [B, H, Tq, S] at (b, h, q).
std::vector<double> new_row(const NDArray& w, Index b, Index h, Index q,
                            const std::vector<Index>& real, const std::vector<Index>& other_real,
                            Replacement kind, Generator& gen) {
  const Index B = w.size(0), H = w.size(1), Tq = w.size(2), S = w.size(3);
  auto at = [&](Index bb, Index j) { return w.data<double>()[((bb * H + h) * Tq + q) * S + j]; };
  std::vector<double> row(static_cast<std::size_t>(S), 0.0);
  const auto n = static_cast<Index>(real.size());
  if (kind == Replacement::kPermuted) {
    const std::vector<Index> order = gen.permutation(n);
    for (Index k = 0; k < n; ++k) row[real[k]] = at(b, real[order[k]]);
    return row;
  }
  double total = 0;
  if (kind == Replacement::kOtherDate) {
    const Index other = (b + 1) % B;
    for (Index j : real)
      if (std::find(other_real.begin(), other_real.end(), j) != other_real.end())
        total += row[j] = at(other, j);
  }
  for (Index j : real) row[j] = total > 0 ? row[j] / total : 1.0 / static_cast<double>(n);
  return row;
}

struct Outcome {
  DecodingScore score;
  Movement moved;
};

Outcome run(const Options& o, DatesModel& m, Replacement kind, bool last_only) {
  Generator gen(o.seed + kPermutationSeed);
  Outcome outcome;
  NDArray mask;  // the source mask of the batch being decoded
  const std::size_t L = m.model->decoder_layers.size();
  for (std::size_t l = last_only ? L - 1 : 0; l < L; ++l)
    m.model->decoder_layers[l]->multihead_attn.weights_hook = [&](const Tensor& w) {
      return Tensor(replace_rows(w.data(), mask, kind, gen, outcome.moved));
    };
  outcome.score = decode_and_score(
      m, [&](const NDArray& batch_mask) { mask = batch_mask; }, /*with_alignment=*/false);
  clear_hooks(*m.model);
  return outcome;
}

}  // namespace

std::string replacement_name(Replacement r) {
  switch (r) {
    case Replacement::kPermuted:
      return "permuted";
    case Replacement::kUniform:
      return "uniform";
    case Replacement::kOtherDate:
      return "another date's";
  }
  return "?";
}

void Movement::add(const std::vector<double>& p, const std::vector<double>& q) {
  double tv = 0, js = 0;
  for (std::size_t j = 0; j < p.size(); ++j) {
    tv += 0.5 * std::abs(p[j] - q[j]);
    const double mid = 0.5 * (p[j] + q[j]);
    if (p[j] > 0) js += 0.5 * p[j] * std::log(p[j] / mid);
    if (q[j] > 0) js += 0.5 * q[j] * std::log(q[j] / mid);
  }
  tvd += tv;
  jsd += js;
  ++rows;
}

NDArray replace_rows(const NDArray& weights, const NDArray& mask, Replacement kind, Generator& gen,
                     Movement& moved) {
  const NDArray w = weights.to(kFloat64);
  const NDArray keep = mask.to(kFloat64);
  const Index B = w.size(0), H = w.size(1), Tq = w.size(2), S = w.size(3);
  if (w.ndim() != 4 || keep.shape() != Shape{B, S})
    fail("replace_rows: weights {} must be [B, H, Tq, S] and the source mask {} [B, S]",
         weights.shape(), mask.shape());
  std::vector<std::vector<Index>> real(static_cast<std::size_t>(B));
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < S; ++j)
      if (keep.data<double>()[b * S + j] != 0) real[b].push_back(j);
  NDArray out = NDArray::zeros(w.shape(), kFloat64);
  for (Index b = 0; b < B; ++b)
    for (Index h = 0; h < H; ++h)
      for (Index q = 0; q < Tq; ++q) {
        const std::vector<double> row = new_row(w, b, h, q, real[b], real[(b + 1) % B], kind, gen);
        double* o = out.data<double>() + ((b * H + h) * Tq + q) * S;
        const double* p = w.data<double>() + ((b * H + h) * Tq + q) * S;
        std::copy(row.begin(), row.end(), o);
        moved.add(std::vector<double>(p, p + S), row);
      }
  return out.to(weights.dtype());
}

void section_dates_replacement(app::Transcript& t, const Options& o, DatesModel& m,
                               DatesSummary& summary) {
  t.heading("Dates 4. Other attention, the same output? (Jain & Wallace 2019)");
  t.say(
      "At inference, every row of the cross-attention (every head) replaced, in every decoder\n"
      "layer or in the last one only: permuted over the date's characters, uniform over them,\n"
      "or the next test date's row (same head and step) cut to them and renormalised. Changed:\n"
      "the share of the {} test dates whose output differs from the intact model's. TVD and\n"
      "JSD: how far the replaced rows are from the computed ones, averaged over the rows.\n\n",
      m.task.test.size());
  t.say("  {:16} {:12} {:>8} {:>11} {:>10} {:>10}\n", "replacement", "layers", "changed",
        "exact match", "mean TVD", "mean JSD");
  t.say("  {:16} {:12} {:>7.1f}% {:>10.1f}% {:>10} {:>10}\n", "(none)", "", 0.0,
        100 * m.exact_match, "0", "0");
  for (Replacement kind : {Replacement::kPermuted, Replacement::kUniform, Replacement::kOtherDate})
    for (bool last_only : {false, true}) {
      const Outcome r = run(o, m, kind, last_only);
      const double rows = static_cast<double>(std::max<std::size_t>(r.moved.rows, 1));
      t.say("  {:16} {:12} {:>7.1f}% {:>10.1f}% {:>10.3f} {:>10.3f}\n", replacement_name(kind),
            last_only ? "last" : "all", 100 * r.score.changed, 100 * r.score.exact_match,
            r.moved.tvd / rows, r.moved.jsd / rows);
      if (kind == Replacement::kPermuted && !last_only) summary.permuted_changed = r.score.changed;
    }
}

void say_dates_summary(app::Transcript& t, const DatesSummary& s) {
  t.say("Exact match on the test dates: {:.2f}%.\n", 100 * s.exact_match);
  t.say("Best map for the source spans: {}, {:.1f}%;\n", s.best_method,
        100 * s.best_method_alignment);
  t.say("relevance (Chefer et al. 2021b): {:.1f}%.\n", 100 * s.relevance_alignment);
  t.say("Heads: {} of {} pruned with the exact match still >= 99%.\n", s.heads_prunable, s.heads);
  t.say("The alignment's carriers:\n  {}.\n", s.carriers.empty() ? "none" : s.carriers);
  t.say("Permuted cross-attention (every layer) changes {:.1f}% of the outputs.\n",
        100 * s.permuted_changed);
}

}  // namespace attend::lesson13
