// Dates 3: how much does each head matter? Every head of every attention (the encoder's
// self-attention, the decoder's self-attention, the cross-attention; every layer) is masked
// at inference, one at a time: its weights set to 0 through MultiheadAttention::weights_hook,
// so that its part of the concatenation is 0 (the head mask xi_h = 0 of Michel et al. 2019,
// "Are Sixteen Heads Really Better than One?"). Then the heads are pruned cumulatively, the
// least important first, in the order of the single-head drops (measured once, not again
// after each pruning step), with the exact match plotted against the heads pruned.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "dates.h"

namespace attend::lesson13 {
namespace {

// A model "still works" while its exact match stays at or above this.
constexpr double kWorking = 0.99;

struct Head {
  AttentionKind kind;
  Index layer, head;
};

std::string head_name(const Head& h) {
  return fmt::format("{} L{} H{}", kind_name(h.kind), h.layer + 1, h.head + 1);
}

// "a, b, c, d,\n  e": the names, four to a line.
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i % 4 == 0 ? ",\n  " : ", ") + names[i];
  return out;
}

std::vector<Head> all_heads(const seq::TransformerSeq2Seq& model) {
  std::vector<Head> heads;
  for (AttentionKind kind :
       {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kCross})
    for (Index l = 0; l < model.sizes().layers; ++l)
      for (Index h = 0; h < model.sizes().heads; ++h) heads.push_back({kind, l, h});
  return heads;
}

// Hooks that zero the weights of the `masked` heads, one hook per attention module touched.
void mask_heads(seq::TransformerSeq2Seq& model, const std::vector<Head>& masked) {
  clear_hooks(model);
  for (const Head& first : masked) {
    nn::MultiheadAttention& module = attention_module(model, first.kind, first.layer);
    if (module.weights_hook) continue;  // already set for this module
    std::vector<Index> zeroed;
    for (const Head& h : masked)
      if (h.kind == first.kind && h.layer == first.layer) zeroed.push_back(h.head);
    module.weights_hook = [zeroed](const Tensor& w) {  // w [B, H, Tq, Tk]
      NDArray keep = NDArray::full({1, w.size(1), 1, 1}, 1.0, w.dtype());
      for (Index h : zeroed) keep.set({0, h, 0, 0}, 0.0);
      return w * Tensor(keep);
    };
  }
}

DecodingScore masked_score(DatesModel& m, const std::vector<Head>& masked) {
  mask_heads(*m.model, masked);
  const DecodingScore s = decode_and_score(m);
  clear_hooks(*m.model);
  return s;
}

std::string alignment_cells(const DecodingScore& s, const DecodingScore& intact) {
  std::string cells;
  for (std::size_t l = 0; l < s.alignment.size(); ++l)
    cells += fmt::format(" {:>6.1f}% ({:+5.1f})", 100 * s.alignment[l],
                         100 * (s.alignment[l] - intact.alignment[l]));
  return cells;
}

std::string alignment_header(std::size_t layers) {
  std::string header;
  for (std::size_t l = 0; l < layers; ++l)
    header += fmt::format(" {:>16}", fmt::format("cross L{} align", l + 1));
  return header;
}

// The heads in pruning order: the smallest exact-match drop first, then the smallest
// alignment drop (summed over the layers), then the order of all_heads.
std::vector<std::size_t> pruning_order(const std::vector<DecodingScore>& single,
                                       const DecodingScore& intact) {
  std::vector<std::size_t> order(single.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto cost = [&](std::size_t i) {
    double alignment = 0;
    for (std::size_t l = 0; l < intact.alignment.size(); ++l)
      alignment += intact.alignment[l] - single[i].alignment[l];
    return std::pair(intact.exact_match - single[i].exact_match, alignment);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost(a) < cost(b); });
  return order;
}

void prune(app::Transcript& t, const Options& o, DatesModel& m, const std::vector<Head>& heads,
           const std::vector<DecodingScore>& single, const DecodingScore& intact,
           DatesSummary& summary) {
  const std::vector<std::size_t> order = pruning_order(single, intact);
  t.say("\nPruning, the least important head first (the order of the single-head drops):\n\n");
  t.say("  {:>6}  {:20} {:>11}{}\n", "pruned", "last pruned", "exact match",
        alignment_header(intact.alignment.size()));
  const std::size_t L = intact.alignment.size();
  std::vector<std::string> columns{"heads_pruned", "exact_match"};
  std::vector<viz::Series> curves{{"exact match"}};
  for (std::size_t l = 0; l < L; ++l) {
    columns.push_back(fmt::format("alignment_layer{}", l + 1));
    curves.push_back({fmt::format("alignment, cross-attention layer {}", l + 1)});
  }
  viz::CsvLog csv(o.out + "/dates_pruning.csv", columns);
  std::vector<Head> masked;
  bool working = true;
  const auto begin = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k <= order.size(); ++k) {
    if (k > 0) masked.push_back(heads[order[k - 1]]);
    const DecodingScore s = k == 0 ? intact : masked_score(m, masked);
    t.say("  {:>6}  {:20} {:>10.1f}%{}\n", k, k == 0 ? "(none)" : head_name(masked.back()),
          100 * s.exact_match, alignment_cells(s, intact));
    viz::Metrics row{{"heads_pruned", static_cast<double>(k)}, {"exact_match", s.exact_match}};
    curves[0].add(static_cast<double>(k), 100 * s.exact_match);
    for (std::size_t l = 0; l < L; ++l) {
      row.push_back({columns[l + 2], s.alignment[l]});
      curves[l + 1].add(static_cast<double>(k), 100 * s.alignment[l]);
    }
    csv.write(row);
    working = working && s.exact_match >= kWorking;
    if (working) summary.heads_prunable = static_cast<int>(k);
    progress(o, "pruning", k, order.size(), app::seconds_since(begin));
  }
  t.say_plot_files(viz::plot_curves(o.out + "/dates_pruning.png", curves,
                                    {.title = "Heads pruned, least important first",
                                     .x_label = "heads pruned",
                                     .y_label = "% of the test dates (digits for alignment)",
                                     .y2_label = "",
                                     .log_y = false,
                                     .y_min = 0,
                                     .y_max = 100}),
                   o.out + "/dates_pruning");
  t.say("Wrote {}/dates_pruning.csv.\n", o.out);
  t.say("{} of the {} heads can be pruned in this order with the exact match still >= {:.0f}%.\n",
        summary.heads_prunable, heads.size(), 100 * kWorking);
}

}  // namespace

void section_dates_heads(app::Transcript& t, const Options& o, DatesModel& m,
                         DatesSummary& summary) {
  t.heading("Dates 3. Which heads matter? Masking and pruning");
  const std::vector<Head> heads = all_heads(*m.model);
  summary.heads = static_cast<int>(heads.size());
  const DecodingScore intact = decode_and_score(m);
  t.say(
      "Each head masked alone at inference (its weights set to 0 by a weights hook), the test\n"
      "dates decoded greedily: exact match, and the alignment accuracy of each decoder layer's\n"
      "cross-attention (head mean; the masked head counts as 0), with the change in points.\n\n");
  t.say("  {:20} {:>11}{}\n", "head masked", "exact match",
        alignment_header(intact.alignment.size()));
  t.say("  {:20} {:>10.1f}%{}\n", "(none)", 100 * intact.exact_match,
        alignment_cells(intact, intact));
  std::vector<DecodingScore> single;
  std::vector<std::string> carriers;
  const auto begin = std::chrono::steady_clock::now();
  for (const Head& h : heads) {
    single.push_back(masked_score(m, {h}));
    const DecodingScore& s = single.back();
    t.say("  {:20} {:>10.1f}%{}\n", head_name(h), 100 * s.exact_match, alignment_cells(s, intact));
    for (std::size_t l = 0; l < s.alignment.size(); ++l)
      if (intact.alignment[l] - s.alignment[l] >= o.dates_carry) {
        carriers.push_back(head_name(h));
        break;
      }
    progress(o, "heads masked", single.size(), heads.size(), app::seconds_since(begin));
  }
  summary.carriers = listed(carriers);
  t.say(
      "\nThe heads whose masking lowers a layer's alignment by {:.1f} point(s) or more (they\n"
      "carry the alignment):\n  {}.\n",
      100 * o.dates_carry, carriers.empty() ? "none" : summary.carriers);
  prune(t, o, m, heads, single, intact, summary);
}

}  // namespace attend::lesson13
