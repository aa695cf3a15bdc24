// Dates 2: which map tells where an output digit came from? The raw cross-attention of every
// layer (heads averaged, and every single head), the encoder-decoder rollout baseline, the
// relevance rules of Chefer et al. 2021b without and with the gradient, and a random and a
// uniform map, all scored against the true source spans of the test dates.
//
// Each output character i is explained as it was written: with the decoder cut to positions
// 0..i (the prefix that existed then), and, for the gradient methods, the gradient of the
// logit of the character the model wrote, y_i, with respect to every attention map.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "dates.h"

namespace attend::lesson13 {
namespace {

using interpret::EncoderDecoderAttention;

// The figure's date: the first test date of this format (lesson 11's "the 3rd of march, 2015").
constexpr int kMapFormat = 7;
// The random map's generator: --seed plus this.
constexpr std::uint64_t kRandomMapSeed = 1301;

struct Maps {
  std::vector<MapSet> cross_mean;               // [layer]
  std::vector<std::vector<MapSet>> cross_head;  // [layer][head]
  MapSet rollout, rules_mean, last_gradient, relevance, random, uniform;
};

// One batch fed its decoded outputs, in the graph (evaluation mode: no dropout).
struct Pass {
  seq::Batch batch;
  Tensor logits;                        // [B, T, V]
  std::vector<Tensor> enc, dec, cross;  // per layer, per head; their gradients are kept
  std::vector<Index> sources, rows;     // per example: input characters, decoded rows
};

Pass forward_pass(DatesModel& m, std::size_t start, std::size_t end) {
  Pass p{decoded_batch(m, m.decoded, start, end), {}, {}, {}, {}, {}, {}};
  seq::TransformerSeq2Seq& model = *m.model;
  const seq::Encoded e = model.encode(p.batch.source, p.batch.source_mask);
  p.logits = model.output_layer(model.decode_all(e, p.batch.decoder_input).features);
  for (auto& layer : model.encoder_layers) p.enc.push_back(layer->self_attention_weights);
  for (auto& layer : model.decoder_layers) {
    p.dec.push_back(layer->self_attention_weights);
    p.cross.push_back(layer->cross_attention_weights);
  }
  for (auto* list : {&p.enc, &p.dec, &p.cross})
    for (Tensor& w : *list) w.retain_grad();
  for (std::size_t i = start; i < end; ++i) {
    p.sources.push_back(static_cast<Index>(m.task.test[i].input.size()));
    p.rows.push_back(static_cast<Index>(m.decoded[i].weights.size()));
  }
  return p;
}

// Example b's maps (or their gradients), the decoder cut to its first `rows` positions and
// the source to its real characters.
EncoderDecoderAttention cut(const Pass& p, Index b, Index rows, bool gradient) {
  const Index S = p.sources[static_cast<std::size_t>(b)];
  auto get = [&](const Tensor& w, Index r, Index k) {
    return example_maps(gradient ? w.grad() : w, b, r, k);
  };
  EncoderDecoderAttention a;
  for (const Tensor& w : p.enc) a.encoder_self.push_back(get(w, S, S));
  for (const Tensor& w : p.dec) a.decoder_self.push_back(get(w, rows, rows));
  for (const Tensor& w : p.cross) a.cross.push_back(get(w, rows, S));
  return a;
}

std::vector<double> row_of(const NDArray& matrix, Index i) {
  return matrix_rows(slice(matrix, 0, i, i + 1)).front();
}

// The maps that need no gradient, for every example of the pass.
void add_gradient_free(const Pass& p, Maps& maps, Generator& gen) {
  for (std::size_t b = 0; b < p.rows.size(); ++b) {
    const Index rows = p.rows[b], S = p.sources[b];
    const EncoderDecoderAttention a = cut(p, static_cast<Index>(b), rows, false);
    for (std::size_t l = 0; l < a.cross.size(); ++l) {
      maps.cross_mean[l].push_back(matrix_rows(interpret::head_mean(a.cross[l])));
      for (std::size_t h = 0; h < maps.cross_head[l].size(); ++h)
        maps.cross_head[l][h].push_back(
            matrix_rows(slice(a.cross[l], 0, h, h + 1).reshape({rows, S})));
    }
    Rows rollout, rules, random, uniform;
    for (Index i = 0; i < rows; ++i) {  // output i, explained with the prefix 0..i
      const EncoderDecoderAttention prefix = cut(p, static_cast<Index>(b), i + 1, false);
      rollout.push_back(row_of(interpret::encoder_decoder_rollout(prefix), i));
      rules.push_back(row_of(interpret::encoder_decoder_relevance(prefix).target_source, i));
      random.emplace_back();
      for (Index j = 0; j < S; ++j) random.back().push_back(gen.uniform());
      uniform.emplace_back(static_cast<std::size_t>(S), 1.0 / static_cast<double>(S));
    }
    maps.rollout.push_back(rollout);
    maps.rules_mean.push_back(rules);
    maps.random.push_back(random);
    maps.uniform.push_back(uniform);
  }
}

// Relevance (eqs. 5-10) and eq. 5 on the last cross-attention alone: one backward pass per
// output position, from the logits of the characters written there.
void add_gradient_based(DatesModel& m, Pass& p, std::size_t start, Maps& maps) {
  const std::size_t B = p.rows.size();
  std::vector<Rows> relevance(B), last(B);
  for (std::size_t b = 0; b < B; ++b) {
    relevance[b].assign(static_cast<std::size_t>(p.rows[b]),
                        std::vector<double>(static_cast<std::size_t>(p.sources[b]), 0.0));
    last[b] = relevance[b];
  }
  const Index T = p.logits.size(1);
  for (Index i = 0; i < T; ++i) {
    NDArray seed = NDArray::zeros(p.logits.shape(), p.logits.dtype());
    std::vector<std::size_t> explained;  // the examples that wrote a digit at i
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t e = start + b;
      const auto& tokens = m.decoded[e].tokens;
      const auto& spans = m.task.test[e].source;
      if (i >= static_cast<Index>(tokens.size()) || i >= static_cast<Index>(spans.size()) ||
          spans[static_cast<std::size_t>(i)].empty())
        continue;
      seed.set({static_cast<Index>(b), i, tokens[static_cast<std::size_t>(i)]}, 1.0);
      explained.push_back(b);
    }
    if (explained.empty()) continue;
    for (auto* list : {&p.enc, &p.dec, &p.cross})
      for (Tensor& w : *list) w.zero_grad();
    // The examples are independent, so one backward of the sum gives each its own gradient.
    p.logits.backward(seed, {.retain_graph = true});
    for (std::size_t b : explained) {
      const EncoderDecoderAttention a = cut(p, static_cast<Index>(b), i + 1, false);
      const EncoderDecoderAttention g = cut(p, static_cast<Index>(b), i + 1, true);
      relevance[b][static_cast<std::size_t>(i)] =
          row_of(interpret::encoder_decoder_relevance(a, g).target_source, i);
      last[b][static_cast<std::size_t>(i)] =
          row_of(interpret::gradient_weighted_attention(a.cross.back(), g.cross.back()), i);
    }
  }
  m.model->zero_grad();
  for (std::size_t b = 0; b < B; ++b) {
    maps.relevance.push_back(relevance[b]);
    maps.last_gradient.push_back(last[b]);
  }
}

Maps all_maps(const Options& o, DatesModel& m) {
  const std::size_t L = m.model->decoder_layers.size();
  const auto H = static_cast<std::size_t>(m.model->sizes().heads);
  Maps maps{std::vector<MapSet>(L),
            std::vector<std::vector<MapSet>>(L, std::vector<MapSet>(H)),
            {},
            {},
            {},
            {},
            {},
            {}};
  Generator gen(o.seed + kRandomMapSeed);
  const auto begin = std::chrono::steady_clock::now();
  const std::size_t n = m.task.test.size(), step = static_cast<std::size_t>(kDecodeBatch);
  for (std::size_t start = 0; start < n; start += step) {
    const std::size_t end = std::min(n, start + step);
    {
      Pass p = forward_pass(m, start, end);
      add_gradient_free(p, maps, gen);
      add_gradient_based(m, p, start, maps);
    }
    // The batch's graph and gradients: the next batch's sources have another padded length,
    // so their blocks would only sit in the allocator's cache (tensor/allocator.h).
    memory::empty_cache();
    progress(o, "maps of the test dates", end, n, app::seconds_since(begin));
  }
  return maps;
}

// Each row divided by its largest entry, so that every method's map spans [0, 1].
NDArray display_matrix(const Rows& rows) {
  Rows scaled = rows;
  for (auto& r : scaled) {
    const double top = r.empty() ? 0.0 : *std::max_element(r.begin(), r.end());
    if (top > 0)
      for (double& x : r) x /= top;
  }
  return interpret::attention_matrix(scaled, static_cast<Index>(rows.front().size()));
}

void draw_maps(app::Transcript& t, const Options& o, const DatesModel& m,
               const std::vector<std::pair<std::string, const MapSet*>>& methods) {
  const auto it = std::find_if(m.task.test.begin(), m.task.test.end(),
                               [](const data::DateExample& e) { return e.format == kMapFormat; });
  if (it == m.task.test.end()) return;
  const auto i = static_cast<std::size_t>(it - m.task.test.begin());
  std::vector<viz::HeatmapPanel> panels;
  for (const auto& [name, maps] : methods) panels.push_back({name, display_matrix((*maps)[i])});
  viz::PanelOptions options{
      .heatmap = {.title = fmt::format("\"{}\" -> {}", it->input, m.outputs[i]),
                  .x_label = "input character",
                  .y_label = "output",
                  .value_label = "share of the row's largest value",
                  .row_labels = seq::output_labels(m.task.target_vocabulary, m.decoded[i]),
                  .column_labels = seq::character_labels(it->input),
                  .min_value = 0.0,
                  .max_value = 1.0},
      .columns = 4};
  t.say_plot_files(viz::plot_heatmap_panel(o.out + "/dates_methods.png", panels, options),
                   o.out + "/dates_methods");
  t.say(
      "(The maps are of \"{}\", the first test date of format {};\n"
      "each row scaled to its largest value; rows of '-' and <eos> are empty for the gradient\n"
      "methods.)\n",
      it->input, kMapFormat);
}

// Every method's map of the first test date of each format, as data for the interactive
// viewer (docs/viewer.md), each with its alignment and mass over all the test dates. Returns
// the viewer page's path.
std::string write_viewer_data(const Options& o, const DatesModel& m,
                              const std::vector<std::pair<std::string, const MapSet*>>& methods) {
  viz::AttentionRun run{.lesson = "13_reading_attention",
                        .title =
                            "which map says where a digit came from (each row scaled to "
                            "its largest value)",
                        .kind = "sequence",
                        .seed = o.seed,
                        .flags = ""};
  std::vector<std::vector<std::pair<std::string, double>>> scores;
  for (const auto& [name, maps] : methods) {
    const MapScore s = score_maps(m.task.test, *maps);
    scores.push_back({{"alignment (all test dates)", s.alignment}, {"mass", s.mass}});
  }
  for (const std::size_t i : seq::first_date_of_each_format(m.task.test)) {
    const data::DateExample& date = m.task.test[i];
    viz::AttentionExample e =
        seq::date_attention_example(m.task.target_vocabulary, date, m.decoded[i]);
    for (std::size_t k = 0; k < methods.size(); ++k) {
      viz::AttentionMap map{.method = methods[k].first,
                            .values = viz::map_rows(display_matrix((*methods[k].second)[i])),
                            .scores = scores[k]};
      if (map.values.size() == e.target.size()) e.maps.push_back(std::move(map));
    }
    if (!e.maps.empty()) run.examples.push_back(std::move(e));
  }
  return viz::write_attention_run(o.out, run).string();
}

}  // namespace

void section_dates_methods(app::Transcript& t, const Options& o, DatesModel& m,
                           DatesSummary& summary) {
  t.heading("Dates 2. Which map says where a digit came from?");
  const Maps maps = all_maps(o, m);
  // The best single head, chosen on these test dates (as lesson 11 does).
  std::string best_name;
  const MapSet* best = nullptr;
  double best_score = -1;
  for (std::size_t l = 0; l < maps.cross_head.size(); ++l)
    for (std::size_t h = 0; h < maps.cross_head[l].size(); ++h) {
      const double a = score_maps(m.task.test, maps.cross_head[l][h]).alignment;
      if (a > best_score) {
        best_score = a;
        best = &maps.cross_head[l][h];
        best_name = fmt::format("cross-attention, best head (layer {} head {})", l + 1, h + 1);
      }
    }
  std::vector<std::pair<std::string, const MapSet*>> methods;
  for (std::size_t l = 0; l < maps.cross_mean.size(); ++l)
    methods.push_back(
        {fmt::format("cross-attention layer {}, head mean", l + 1), &maps.cross_mean[l]});
  methods.push_back({best_name, best});
  methods.push_back({"rollout (last cross layer between the rollouts)", &maps.rollout});
  methods.push_back({"rules of eqs. 6-10, head mean (no gradient)", &maps.rules_mean});
  methods.push_back({"gradient x attention, last cross layer (eq. 5)", &maps.last_gradient});
  methods.push_back({"relevance (Chefer et al. 2021b, eqs. 5-10)", &maps.relevance});
  const std::size_t drawn = methods.size();
  methods.push_back({"random map (baseline)", &maps.random});
  methods.push_back({"uniform map (baseline; ties: the first character)", &maps.uniform});

  t.say(
      "For every output digit of the {} test dates, each method's map over the input\n"
      "characters: alignment = is its largest entry inside the year, month or day the digit\n"
      "comes from (lesson 07's measure); mass = the share of the map inside that span.\n\n",
      m.task.test.size());
  t.say("  {:56} {:>9} {:>6}\n", "method", "alignment", "mass");
  for (const auto& [name, set] : methods) {
    const MapScore s = score_maps(m.task.test, *set);
    t.say("  {:56} {:>8.1f}% {:>5.1f}%\n", name, 100 * s.alignment, 100 * s.mass);
    if (name.starts_with("relevance")) summary.relevance_alignment = s.alignment;
    if (set != &maps.random && set != &maps.uniform &&
        s.alignment > summary.best_method_alignment) {
      summary.best_method_alignment = s.alignment;
      summary.best_method = name;
    }
  }
  methods.resize(drawn);
  draw_maps(t, o, m, methods);
  t.say("Wrote {}/attention.json (these maps of one date per format); to explore it, open {}.\n",
        o.out, write_viewer_data(o, m, methods));
}

}  // namespace attend::lesson13
