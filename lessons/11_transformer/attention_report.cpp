// Section 4 of the program: where the Transformer's cross-attention looks, layer by layer and
// head by head, scored against the source spans the digits come from; and the maps of one
// date (cross-attention and the encoder's self-attention).
#include <fmt/format.h>

#include <algorithm>

#include "lesson.h"

namespace attend::lesson11 {
namespace {

// The date of the maps: the first test date of this format ("the 3rd of march, 2015"), whose
// day comes before its month and its month before its year, all three to be reordered.
constexpr int kMapFormat = 7;
constexpr Index kBatch = 250;

// Row r of the [S] vector w[b, h, r, :] of a [B, H, T, S] float64 array.
std::vector<double> row_of(const NDArray& w, Index b, Index h, Index r) {
  const Index S = w.size(3);
  const double* p = w.data<double>() + ((b * w.size(1) + h) * w.size(2) + r) * S;
  return {p, p + S};
}

// The layer x (heads + average) panels of one example's cross-attention, or the layer x
// heads panels of its encoder self-attention.
std::vector<viz::HeatmapPanel> panels(const std::vector<std::vector<AttentionRows>>& by_layer,
                                      Index source_length, bool average) {
  std::vector<viz::HeatmapPanel> out;
  for (std::size_t l = 0; l < by_layer.size(); ++l)
    for (std::size_t h = 0; h < by_layer[l].size(); ++h) {
      const bool is_average = average && h + 1 == by_layer[l].size();
      out.push_back({is_average ? fmt::format("layer {}: average", l + 1)
                                : fmt::format("layer {} head {}", l + 1, h + 1),
                     interpret::attention_matrix(by_layer[l][h], source_length)});
    }
  return out;
}

}  // namespace

std::vector<std::vector<std::vector<AttentionRows>>> cross_attention_of(
    seq::TransformerSeq2Seq& model, const seq::DateTask& task,
    const std::vector<Decoded>& decoded) {
  const Index L = model.sizes().layers, H = model.sizes().heads;
  std::vector<std::vector<std::vector<AttentionRows>>> out(
      static_cast<std::size_t>(L), std::vector<std::vector<AttentionRows>>(H + 1));
  for (std::size_t start = 0; start < decoded.size(); start += kBatch) {
    const std::size_t end = std::min(decoded.size(), start + kBatch);
    std::vector<seq::TokenIds> sources, outputs;
    for (std::size_t i = start; i < end; ++i) {
      sources.push_back(task.source_vocabulary.encode_characters(task.test[i].input));
      outputs.push_back(decoded[i].tokens);
    }
    // The decoder fed its own outputs (<bos> y_1 .. y_n) in one pass: the attention of every
    // step of the greedy decoding at once.
    const seq::Batch batch = seq::make_batch(sources, outputs);
    const seq::TransformerAttention maps =
        model.attention_maps(batch.source, batch.source_mask, batch.decoder_input);
    for (Index l = 0; l < L; ++l) {
      const NDArray w = maps.cross[static_cast<std::size_t>(l)].data().to(kFloat64);
      auto& layer = out[static_cast<std::size_t>(l)];
      for (std::size_t i = start; i < end; ++i) {
        const Index b = static_cast<Index>(i - start);
        const Index rows = static_cast<Index>(decoded[i].weights.size());
        for (auto& head : layer) head.emplace_back();
        for (Index r = 0; r < rows; ++r) {
          std::vector<double> average(static_cast<std::size_t>(w.size(3)), 0.0);
          for (Index h = 0; h < H; ++h) {
            std::vector<double> row = row_of(w, b, h, r);
            for (std::size_t j = 0; j < row.size(); ++j) average[j] += row[j] / H;
            layer[static_cast<std::size_t>(h)].back().push_back(std::move(row));
          }
          layer[static_cast<std::size_t>(H)].back().push_back(std::move(average));
        }
      }
    }
  }
  return out;
}

std::vector<std::vector<double>> alignment_table(
    const seq::DateTask& task,
    const std::vector<std::vector<std::vector<AttentionRows>>>& weights) {
  std::vector<std::vector<double>> table;
  for (const auto& layer : weights) {
    table.emplace_back();
    for (const auto& head : layer)
      table.back().push_back(interpret::alignment_accuracy(task.test, head).accuracy());
  }
  return table;
}

void best_head(const std::vector<std::vector<double>>& table, ModelScores& s) {
  for (std::size_t l = 0; l < table.size(); ++l)
    for (std::size_t h = 0; h + 1 < table[l].size(); ++h)  // the last column is the average
      if (table[l][h] > s.best_head_alignment) {
        s.best_head_alignment = table[l][h];
        s.best_head = fmt::format("layer {} head {}", l + 1, h + 1);
      }
  s.alignment = table.back().back();  // what decoding reports: the last layer's average
}

namespace {

// The maps of one date: the cross-attention of every layer and head (and each layer's
// average), and the encoder's self-attention.
void draw_maps(app::Transcript& t, seq::TransformerSeq2Seq& model, const seq::DateTask& task,
               const ModelScores& s,
               const std::vector<std::vector<std::vector<AttentionRows>>>& weights,
               const Options& o) {
  const std::size_t H = static_cast<std::size_t>(o.heads);
  const auto it = std::find_if(task.test.begin(), task.test.end(),
                               [](const data::DateExample& e) { return e.format == kMapFormat; });
  if (it == task.test.end()) return;
  const std::size_t i = static_cast<std::size_t>(it - task.test.begin());
  const Index length = static_cast<Index>(it->input.size());
  const std::string output = task.target_vocabulary.decode_characters(s.decoded[i].tokens);
  std::vector<std::vector<AttentionRows>> one(weights.size());
  for (std::size_t l = 0; l < weights.size(); ++l)
    for (std::size_t h = 0; h <= H; ++h) one[l].push_back(weights[l][h][i]);
  viz::PanelOptions cross{
      .heatmap = {.title = fmt::format("cross-attention: \"{}\" -> {}", it->input, output),
                  .x_label = "input character",
                  .y_label = "output",
                  .value_label = "attention weight",
                  .row_labels = seq::output_labels(task.target_vocabulary, s.decoded[i]),
                  .column_labels = seq::character_labels(it->input),
                  .min_value = 0.0,
                  .max_value = 1.0},
      .columns = static_cast<int>(H + 1)};
  t.say_plot_files(
      viz::plot_heatmap_panel(o.out + "/cross_attention.png", panels(one, length, true), cross),
      o.out + "/cross_attention");

  // The encoder's self-attention of the same date: which characters each character reads.
  const seq::Batch batch = seq::date_batch(task, task.test, {i});
  const seq::TransformerAttention maps =
      model.attention_maps(batch.source, batch.source_mask, batch.decoder_input);
  std::vector<std::vector<AttentionRows>> self(maps.encoder_self.size());
  for (std::size_t l = 0; l < maps.encoder_self.size(); ++l) {
    const NDArray w = maps.encoder_self[l].data().to(kFloat64);
    for (std::size_t h = 0; h < H; ++h) {
      self[l].emplace_back();
      for (Index r = 0; r < length; ++r)
        self[l][h].push_back(row_of(w, 0, static_cast<Index>(h), r));
    }
  }
  viz::PanelOptions encoder{
      .heatmap = {.title = fmt::format("encoder self-attention: \"{}\"", it->input),
                  .x_label = "key (input character)",
                  .y_label = "query (input character)",
                  .value_label = "attention weight",
                  .row_labels = seq::character_labels(it->input),
                  .column_labels = seq::character_labels(it->input),
                  .min_value = 0.0,
                  .max_value = 1.0},
      .columns = static_cast<int>(H)};
  t.say_plot_files(viz::plot_heatmap_panel(o.out + "/encoder_self_attention.png",
                                           panels(self, length, false), encoder),
                   o.out + "/encoder_self_attention");
  t.say("(The maps are of \"{}\", the first test date of format {}; '_' is a space.)\n", it->input,
        kMapFormat);
}

// The cross-attention of the first test date of each format, every layer and head and each
// layer's average, as data for the interactive viewer (docs/viewer.md).
std::string write_viewer_data(const seq::DateTask& task, const ModelScores& s,
                              const std::vector<std::vector<std::vector<AttentionRows>>>& weights,
                              const Options& o) {
  viz::AttentionRun run{
      .lesson = "11_transformer",
      .title = "cross-attention of the decoded test dates: every layer and head",
      .kind = "sequence",
      .seed = o.seed,
      .flags = fmt::format("--d-model {} --heads {} --layers {} --positions {} --epochs {}",
                           o.d_model, o.heads, o.layers, o.positions, o.epochs)};
  for (const std::size_t i : seq::first_date_of_each_format(task.test)) {
    const data::DateExample& date = task.test[i];
    viz::AttentionExample e =
        seq::date_attention_example(task.target_vocabulary, date, s.decoded[i]);
    const Index length = static_cast<Index>(date.input.size());
    for (std::size_t l = 0; l < weights.size(); ++l)
      for (std::size_t h = 0; h < weights[l].size(); ++h) {
        viz::AttentionMap m{
            .layer = static_cast<int>(l),
            .values = viz::map_rows(interpret::attention_matrix(weights[l][h][i], length))};
        if (h + 1 < weights[l].size()) m.head = static_cast<int>(h);
        e.maps.push_back(std::move(m));
      }
    run.examples.push_back(std::move(e));
  }
  return viz::write_attention_run(o.out, run).string();
}

}  // namespace

void score_alignment(app::Transcript& t, seq::TransformerSeq2Seq& model, const seq::DateTask& task,
                     ModelScores& s, const Options& o) {
  t.heading("4. Where does the cross-attention look?");
  const auto weights = cross_attention_of(model, task, s.decoded);
  const std::vector<std::vector<double>> table = alignment_table(task, weights);
  best_head(table, s);
  t.say(
      "Alignment accuracy (%): for each output digit, is the most-attended input character\n"
      "inside the year, month or day the digit comes from? (lesson 07's measure)\n\n");
  t.say("  {:8}", "");
  for (Index h = 0; h < o.heads; ++h) t.say(" {:>7}", fmt::format("head {}", h + 1));
  t.say(" {:>8}\n", "average");
  for (std::size_t l = 0; l < table.size(); ++l) {
    t.say("  layer {:<2}", l + 1);
    for (double a : table[l]) t.say(" {:>7.1f}", 100 * a);
    t.say("\n");
  }
  t.say(
      "\nThe best head: {}, {:.1f}% ({} {:.0f}%). Decoding reports the last layer's average\n"
      "({:.1f}%).\n",
      s.best_head, 100 * s.best_head_alignment,
      s.best_head_alignment >= kAlignmentTarget ? "at least" : "below", 100 * kAlignmentTarget,
      100 * s.alignment);
  draw_maps(t, model, task, s, weights, o);
  t.say("Wrote {}/attention.json (one test date per format); to explore it, open {}.\n", o.out,
        write_viewer_data(task, s, weights, o));
}

}  // namespace attend::lesson11
