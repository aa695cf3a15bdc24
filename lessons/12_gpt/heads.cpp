// What the heads do, measured. For every layer and head, over many validation windows, the
// mean share of a query's attention that lands on
//   previous   the character just before it (t - 1)
//   word start the first letter of the query's own word, when that is at least 2 back (so
//              that it is not the previous character again)
//   same char  earlier occurrences of the query's own character
// printed beside what uniform causal attention (1 / (t + 1) on each allowed key) would give,
// and the layer x head grid of maps for one sentence.
#include <cctype>

#include "lesson.h"

namespace attend::lesson12 {

namespace {

bool is_letter(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

// The three shares of one query row (weights over keys 0..i), and whether each applies.
struct RowShares {
  double previous = 0, word_start = 0, same_char = 0;
  bool has_word_start = false, has_same_char = false;
};

RowShares row_shares(const float* row, const std::string& text, Index i) {
  RowShares s;
  s.previous = row[i - 1];
  if (is_letter(text[static_cast<std::size_t>(i)])) {
    Index start = i;
    while (start > 0 && is_letter(text[static_cast<std::size_t>(start - 1)])) --start;
    // start == 0 may be a word cut by the window: not a real start.
    s.has_word_start = start > 0 && start < i - 1;
    if (s.has_word_start) s.word_start = row[start];
  }
  for (Index j = 0; j < i; ++j)
    if (text[static_cast<std::size_t>(j)] == text[static_cast<std::size_t>(i)]) {
      s.has_same_char = true;
      s.same_char += row[j];
    }
  return s;
}

struct Sums {
  double previous = 0, word_start = 0, same_char = 0;
  Index n_previous = 0, n_word_start = 0, n_same_char = 0;
  void add(const RowShares& s) {
    previous += s.previous;
    ++n_previous;
    if (s.has_word_start) word_start += s.word_start, ++n_word_start;
    if (s.has_same_char) same_char += s.same_char, ++n_same_char;
  }
};

double mean(double sum, Index n) {
  return n > 0 ? sum / static_cast<double>(n) : 0;
}

// Uniform causal weights [1, 1, T, T]: what a head that looks nowhere in particular gives.
Tensor uniform_weights(Index T) {
  NDArray w = NDArray::zeros({1, 1, T, T});
  for (Index i = 0; i < T; ++i)
    for (Index j = 0; j <= i; ++j) w.set({0, 0, i, j}, 1.0 / static_cast<double>(i + 1));
  return Tensor(w);
}

}  // namespace

HeadShares head_shares(const std::vector<Tensor>& weights, const std::vector<std::string>& texts) {
  HeadShares out;
  for (const Tensor& layer : weights) {
    const Index B = layer.size(0), H = layer.size(1), T = layer.size(2);
    const NDArray w = layer.data().to(kFloat32);
    const float* all = w.data<float>();
    out.previous.emplace_back();
    out.word_start.emplace_back();
    out.same_char.emplace_back();
    for (Index h = 0; h < H; ++h) {
      Sums sums;
      for (Index b = 0; b < B; ++b)
        for (Index i = 1; i < T; ++i)
          sums.add(
              row_shares(all + ((b * H + h) * T + i) * T, texts[static_cast<std::size_t>(b)], i));
      out.previous.back().push_back(mean(sums.previous, sums.n_previous));
      out.word_start.back().push_back(mean(sums.word_start, sums.n_word_start));
      out.same_char.back().push_back(mean(sums.same_char, sums.n_same_char));
    }
  }
  return out;
}

namespace {

void print_shares(app::Transcript& t, const HeadShares& s, const HeadShares& uniform) {
  t.say("  {:>5} {:>4} {:>9} {:>11} {:>10}\n", "layer", "head", "previous", "word start",
        "same char");
  for (std::size_t l = 0; l < s.previous.size(); ++l)
    for (std::size_t h = 0; h < s.previous[l].size(); ++h)
      t.say("  {:>5} {:>4} {:>8.1f}% {:>10.1f}% {:>9.1f}%\n", l, h, 100 * s.previous[l][h],
            100 * s.word_start[l][h], 100 * s.same_char[l][h]);
  t.say("  {:>10} {:>8.1f}% {:>10.1f}% {:>9.1f}%   (uniform causal attention)\n", "uniform",
        100 * uniform.previous[0][0], 100 * uniform.word_start[0][0],
        100 * uniform.same_char[0][0]);
}

std::vector<std::string> char_labels(const std::string& text) {
  std::vector<std::string> labels;
  for (char c : text) labels.push_back(c == ' ' ? "_" : c == '\n' ? "\\n" : std::string(1, c));
  return labels;
}

// The self-attention of the sentence, every layer and head, as data for the interactive
// viewer (docs/viewer.md): queries are the rows, keys the columns, both the characters.
std::string write_viewer_data(const std::string& sentence, const std::vector<Tensor>& weights,
                              const std::string& out, std::uint64_t seed) {
  viz::AttentionRun run{.lesson = "12_gpt",
                        .title = "causal self-attention of one validation sentence",
                        .kind = "sequence",
                        .seed = seed,
                        .flags = fmt::format("--layers {} --heads {}", weights.size(),
                                             weights.empty() ? 0 : weights[0].size(1))};
  viz::AttentionExample e{
      .name = sentence, .source = char_labels(sentence), .target = char_labels(sentence)};
  for (std::size_t l = 0; l < weights.size(); ++l)
    for (Index h = 0; h < weights[l].size(1); ++h)
      e.maps.push_back(
          {.layer = static_cast<int>(l),
           .head = static_cast<int>(h),
           .label = fmt::format("layer {} head {}", l, h),
           .values = viz::map_rows(slice(slice(weights[l], 0, 0, 1), 1, h, h + 1)
                                       .data()
                                       .reshape({weights[l].size(2), weights[l].size(3)}))});
  run.examples.push_back(std::move(e));
  return viz::write_attention_run(out, run).string();
}

}  // namespace

void report_heads(app::Transcript& t, Gpt& model, const data::CharVocabulary& vocabulary,
                  const std::vector<std::int64_t>& validation, const std::string& text,
                  const std::string& out, std::uint64_t seed) {
  NoGradGuard no_graph;
  model.eval();
  const Index T = model.config.context;
  Generator gen(12);
  const NDArray windows = data::sample_windows(validation, 64, T, gen);
  std::vector<std::string> texts;
  const auto ids = windows.span<std::int64_t>();
  for (Index b = 0; b < windows.size(0); ++b)
    texts.push_back(vocabulary.decode(ids.subspan(static_cast<std::size_t>(b * T), T)));
  model.forward_with_weights(Tensor(windows));
  const HeadShares shares = head_shares(model.attention_weights(), texts);
  const HeadShares uniform = head_shares({uniform_weights(T)}, {texts[0]});
  t.say("Mean share of each head's attention, over {} validation windows of {} characters:\n",
        windows.size(0), T);
  print_shares(t, shares, uniform);

  // A window that starts at the beginning of a sentence of `text`.
  const std::size_t found = text.find(". ");
  const std::string sentence =
      text.substr(found == std::string::npos ? 0 : found + 2, static_cast<std::size_t>(T));
  const std::vector<std::int64_t> sentence_ids = vocabulary.encode(sentence);
  model.forward_with_weights(
      Tensor(NDArray::from_vector(sentence_ids, {1, static_cast<Index>(sentence_ids.size())})));
  std::vector<viz::HeatmapPanel> panels;
  const std::vector<Tensor> weights = model.attention_weights();
  for (std::size_t l = 0; l < weights.size(); ++l)
    for (Index h = 0; h < weights[l].size(1); ++h)
      panels.push_back({fmt::format("layer {} head {}", l, h),
                        slice(slice(weights[l], 0, 0, 1), 1, h, h + 1)
                            .data()
                            .clone()
                            .reshape({weights[l].size(2), weights[l].size(3)})});
  viz::PanelOptions options;
  options.heatmap.row_labels = options.heatmap.column_labels = char_labels(sentence);
  options.heatmap.title = "Self-attention of every layer (rows) and head (columns)";
  options.heatmap.x_label = "key (earlier character)";
  options.heatmap.y_label = "query";
  options.columns = static_cast<int>(weights[0].size(1));
  options.heatmap.width = 560;  // one panel: room for 64 character labels
  options.heatmap.height = 520;
  t.say("\nThe maps for \"{}\":\n", sentence);
  t.say_plot_files(viz::plot_heatmap_panel(out + "/heads.png", panels, options), out + "/heads");
  t.say("Wrote {}/attention.json (these maps); to explore it, open {}.\n", out,
        write_viewer_data(sentence, weights, out, seed));
  model.train();
}

}  // namespace attend::lesson12
