// Induction heads (Elhage et al. 2021, Olsson et al. 2022), on a task made for them: each
// sequence is a random segment of L distinct tokens (L varies), the same segment again but
// rotated (it starts at a random place and wraps around), then random filler. In the second
// copy the next token is predictable, but only by finding where the current token occurred
// before and copying the token that followed it there. (Without the rotation a shortcut
// works too: "the earliest token of the first copy not repeated yet"; the first version of
// this task had it, and the model learned that instead, docs/12_gpt.md.) Two attention
// layers can do it together:
//   layer 0, a previous-token head: position j takes in the token at j - 1;
//   layer 1, an induction head: the query at i (token A) matches the key whose previous
//   token was A (the position after A's earlier occurrence) and copies the token there.
// Neither layer can do it alone: a one-layer model can only see "which tokens occurred", not
// "which came after A".
#include <algorithm>
#include <chrono>

#include "lesson.h"

namespace attend::lesson12 {

namespace {

constexpr Index kVocabulary = 32, kLength = 40, kMinSegment = 6, kMaxSegment = 16;
constexpr Index kModel = 64, kHeads = 4, kCheckEvery = 250;
constexpr double kStopAt = 0.99;

struct InductionBatch {
  NDArray tokens;                     // int64 [B, kLength]
  std::vector<Index> length, offset;  // L and the rotation m of each sequence
};

// Where the token at position i (in the second copy) occurred in the first copy, if the token
// after it there is the token at i + 1 (not at the wrap, not the last position); else -1.
Index earlier_occurrence(Index L, Index m, Index i) {
  const Index q = i - L;  // position within the second copy
  if (q < 0 || q > L - 2) return -1;
  const Index j = (m + q) % L;
  return j < L - 1 ? j : -1;
}

InductionBatch make_batch(Index batch, Generator& gen) {
  InductionBatch b{NDArray::empty({batch, kLength}, kInt64), {}, {}};
  std::int64_t* out = b.tokens.data<std::int64_t>();
  for (Index s = 0; s < batch; ++s) {
    const Index L = kMinSegment + gen.randint(kMaxSegment - kMinSegment + 1);
    const std::vector<Index> order = gen.permutation(kVocabulary);  // distinct tokens
    std::int64_t* row = out + s * kLength;
    const Index m = gen.randint(L);
    for (Index i = 0; i < L; ++i) {
      row[i] = order[static_cast<std::size_t>(i)];
      row[L + i] = order[static_cast<std::size_t>((m + i) % L)];
    }
    for (Index i = 2 * L; i < kLength; ++i) row[i] = gen.randint(kVocabulary);
    b.length.push_back(L);
    b.offset.push_back(m);
  }
  return b;
}

// Over the predictable positions i of the second copy (target: the token at i + 1): the
// accuracy, and per layer and head the mean weight on the previous token (i - 1), on the
// token after the earlier occurrence (j + 1) and on the earlier occurrence itself (j).
struct InductionScores {
  double accuracy = 0;
  std::vector<std::vector<double>> previous, induction, same;  // [layer][head]
};

InductionScores score(AttentionOnly& model, const InductionBatch& b) {
  NoGradGuard no_graph;
  const Tensor logits = model.forward(Tensor(b.tokens));
  const NDArray predicted = argmax(logits, -1).data();
  const auto p = predicted.span<std::int64_t>();
  const auto tokens = b.tokens.span<std::int64_t>();
  InductionScores s;
  Index correct = 0, count = 0;
  for (std::size_t n = 0; n < b.length.size(); ++n) {
    const Index row = static_cast<Index>(n) * kLength;
    for (Index i = 0; i < kLength; ++i)
      if (earlier_occurrence(b.length[n], b.offset[n], i) >= 0) {
        correct += p[row + i] == tokens[row + i + 1];
        ++count;
      }
  }
  s.accuracy = static_cast<double>(correct) / static_cast<double>(count);
  for (const Tensor& w : model.weights) {
    const NDArray a = w.data();
    s.previous.emplace_back(kHeads, 0.0);
    s.induction.emplace_back(kHeads, 0.0);
    s.same.emplace_back(kHeads, 0.0);
    for (Index h = 0; h < kHeads; ++h)
      for (std::size_t n = 0; n < b.length.size(); ++n) {
        const auto b_index = static_cast<Index>(n);
        for (Index i = 0; i < kLength; ++i) {
          const Index j = earlier_occurrence(b.length[n], b.offset[n], i);
          if (j < 0) continue;
          s.previous.back()[h] += a.at({b_index, h, i, i - 1}) / static_cast<double>(count);
          s.induction.back()[h] += a.at({b_index, h, i, j + 1}) / static_cast<double>(count);
          s.same.back()[h] += a.at({b_index, h, i, j}) / static_cast<double>(count);
        }
      }
  }
  return s;
}

Index best_head(const std::vector<double>& shares) {
  return std::max_element(shares.begin(), shares.end()) - shares.begin();
}

void plot_heads(AttentionOnly& model, const InductionScores& s, const std::string& out,
                app::Transcript& t, Generator& gen) {
  const InductionBatch one = make_batch(1, gen);
  {
    NoGradGuard no_graph;
    model.forward(Tensor(one.tokens));
  }
  const Index prev = best_head(s.previous[0]), ind = best_head(s.induction[1]);
  auto map = [&](std::size_t layer, Index head) {
    return slice(model.weights[layer], 1, head, head + 1)
        .data()
        .clone()
        .reshape({kLength, kLength});
  };
  std::vector<std::string> labels;
  for (std::int64_t token : one.tokens.span<std::int64_t>())
    labels.push_back(std::to_string(token));
  viz::PanelOptions options;
  options.heatmap.row_labels = options.heatmap.column_labels = labels;
  options.heatmap.title = fmt::format("A segment of {} tokens, repeated from its token {}",
                                      one.length[0], one.offset[0]);
  options.heatmap.x_label = "key";
  options.heatmap.y_label = "query";
  options.columns = 2;
  const bool drawn =
      viz::plot_heatmap_panel(out + "/induction_heads.png",
                              {{fmt::format("layer 0 head {}: previous token", prev), map(0, prev)},
                               {fmt::format("layer 1 head {}: induction", ind), map(1, ind)}},
                              options);
  t.say_plot_files(drawn, out + "/induction_heads");
  std::vector<viz::HeatmapPanel> all;
  for (std::size_t l = 0; l < model.weights.size(); ++l)
    for (Index h = 0; h < kHeads; ++h)
      all.push_back({fmt::format("layer {} head {}", l, h), map(l, h)});
  options.columns = static_cast<int>(kHeads);
  t.say_plot_files(viz::plot_heatmap_panel(out + "/induction_all_heads.png", all, options),
                   out + "/induction_all_heads");
}

}  // namespace

void section_induction(app::Transcript& t, const Options& o) {
  t.heading("8. Induction heads");
  t.say(
      "Sequences of {} tokens (vocabulary {}): a segment of L = {}..{} distinct random tokens,\n"
      "the same segment again rotated by a random offset, random filler.\n"
      "2 attention-only layers, d_model {}, {} heads, AdamW (lr {}), batches of {}, at most {}\n"
      "steps, stopping once the accuracy on 512 held-out sequences reaches {:.0f}%.\n",
      kLength, kVocabulary, kMinSegment, kMaxSegment, kModel, kHeads, o.induction_lr,
      o.induction_batch, o.induction_steps, 100 * kStopAt);
  Generator gen(o.seed + 100);
  AttentionOnly model(kVocabulary, kLength, kModel, 2, kHeads, gen);
  optim::AdamW adamw(model.parameters(), {.lr = o.induction_lr, .weight_decay = 0.01});
  const InductionBatch test = make_batch(512, gen);
  // Stop once the accuracy has jumped (the "phase change" of Olsson et al.) and settled.
  const auto start = std::chrono::steady_clock::now();
  Index steps = 0;
  while (steps < o.induction_steps) {
    const InductionBatch b = make_batch(o.induction_batch, gen);
    const Tensor x(b.tokens);
    Tensor loss =
        nn::cross_entropy(slice(model.forward(x), 1, 0, kLength - 1), slice(x, 1, 1, kLength));
    optim::check_loss_is_finite("induction training", steps + 1, loss.item());
    adamw.zero_grad();
    loss.backward();
    adamw.step();
    if (++steps % kCheckEvery != 0) continue;
    const double accuracy = score(model, test).accuracy;
    t.say("  step {:>5}  {:>5.1f} s  loss {:.3f}  accuracy on the repeat {:.1f}%\n", steps,
          app::seconds_since(start), loss.item(), 100 * accuracy);
    if (accuracy >= kStopAt) break;
  }
  const InductionScores s = score(model, test);
  t.say(
      "\nAfter {} steps: next-token accuracy on the repeated half {:.1f}% (target >= 95%;\n"
      "chance {:.1f}%), on 512 new sequences.\n",
      steps, 100 * s.accuracy, 100.0 / kVocabulary);
  t.say("\nMean attention weight of each head, at the predictable positions:\n");
  t.say("  {:>5} {:>4} {:>15} {:>26} {:>15}\n", "layer", "head", "previous token",
        "token after earlier copy", "earlier copy");
  for (std::size_t l = 0; l < s.previous.size(); ++l)
    for (Index h = 0; h < kHeads; ++h)
      t.say("  {:>5} {:>4} {:>14.1f}% {:>25.1f}% {:>14.1f}%\n", l, h, 100 * s.previous[l][h],
            100 * s.induction[l][h], 100 * s.same[l][h]);
  const Index ind = best_head(s.induction[1]);
  t.say(
      "Induction head: layer 1 head {}, {:.1f}% of its mass on the token after the earlier\n"
      "occurrence. Previous-token head: layer 0 head {}, {:.1f}% on t - 1.\n",
      ind, 100 * s.induction[1][ind], best_head(s.previous[0]),
      100 * s.previous[0][best_head(s.previous[0])]);
  plot_heads(model, s, o.out, t, gen);
}

}  // namespace attend::lesson12
