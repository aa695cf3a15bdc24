// Lesson 12: a character-level GPT on a real book. Run it and read docs/12_gpt.md beside it:
//
//   scripts/install_book.sh            # Jane Austen's six novels (1.6 MB), once
//   ./build/bin/12_gpt                 # seed 0, into output/12_gpt (about 6 minutes)
//   ./build/bin/12_gpt --synthetic     # generated sentences instead of the book
//   ./build/bin/12_gpt --long          # the same models for 480 s each (about 17 minutes)
//
// A decoder-only Transformer reads 64 characters and predicts each next one. It is trained
// on the first 90% of the novels, scored on the last 10% against count models and a GRU of
// the same size trained for the same time, then writes text, and we look at what its heads
// do. A last section trains the smallest model with induction heads.
#include <algorithm>
#include <chrono>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson12;
using attend::app::seconds_since;
using attend::app::Transcript;

namespace {

std::string load_text(Transcript& t, const Options& o) {
  t.heading("1. The book");
  std::string raw;
  if (o.synthetic) {
    raw = data::synthetic_text(1'000'000, o.seed);
    t.say("--synthetic: 1,000,000 characters of generated sentences (no book).\n");
  } else if (!o.text.empty()) {
    raw = data::read_text_file(o.text);
    t.say("{}: {} bytes of UTF-8.\n", o.text, raw.size());
  } else {
    raw = data::read_austen_novels(data::austen_file());
    t.say("Jane Austen's six novels ({}), in publication order: {} bytes of UTF-8.\n",
          data::austen_file(), raw.size());
  }
  data::FoldedText folded = data::fold_to_ascii(raw);
  Index mapped = 0, dropped = folded.malformed;
  for (const auto& [c, n] : folded.mapped) mapped += n;
  for (const auto& [c, n] : folded.dropped) dropped += n;
  t.say("Folded to ASCII: {} characters replaced by the table, {} dropped.\n", mapped, dropped);
  for (const auto& [c, n] : folded.mapped) t.say("  replaced {:>8}x  {:?}\n", n, c);
  for (const auto& [c, n] : folded.dropped) t.say("  dropped  {:>8}x  {:?}\n", n, c);
  return std::move(folded.text);
}

void describe_corpus(Transcript& t, const data::CharCorpus& c) {
  t.say("{} characters: the first {} to train on, the last {} to validate on.\n",
        c.train.size() + c.validation.size(), c.train.size(), c.validation.size());
  t.say("Vocabulary: {} characters: {:?}\n", c.vocabulary.size(), c.vocabulary.characters());
}

struct Row {
  std::string name;
  Index parameters = 0, steps = 0;
  double seconds = 0, nats = 0;
};

void print_table(Transcript& t, const std::vector<Row>& rows) {
  t.say("\n  {:<28} {:>10} {:>7} {:>9} {:>10} {:>9}\n", "model", "parameters", "steps", "seconds",
        "nats/char", "bits/char");
  for (const Row& r : rows)
    t.say("  {:<28} {:>10} {:>7} {:>9.0f} {:>10.3f} {:>9.3f}\n", r.name, r.parameters, r.steps,
          r.seconds, r.nats, r.nats / kLn2);
}

void plot_training(const std::vector<std::pair<std::string, TrainResult>>& runs,
                   const std::string& out, Transcript& t) {
  std::vector<viz::Series> series;
  for (const auto& [name, r] : runs) {
    series.push_back({name});
    for (auto [s, loss] : r.curve) series.back().add(s, loss);
  }
  t.say_plot_files(viz::plot_curves(out + "/training.png", series,
                                    {.title = "Validation loss against training time",
                                     .x_label = "training seconds",
                                     .y_label = "nats per character",
                                     .y2_label = ""}),
                   out + "/training");
}

void section_samples(Transcript& t, Gpt& gpt, const data::CharCorpus& c, const Options& o) {
  t.heading("6. Writing");
  const Sampling sampling{.temperature = o.temperature, .top_k = o.top_k};
  for (const std::string_view wanted : {"It is a truth", "\n"}) {
    const bool known = std::all_of(wanted.begin(), wanted.end(),
                                   [&](char ch) { return c.vocabulary.contains(ch); });
    const std::string prompt(known ? wanted : "\n");  // generated text has no capital I
    Generator gen(o.seed + 7);
    t.say("Temperature {}, top-k {}, prompt {:?}:\n{}{}\n\n", o.temperature, o.top_k, prompt,
          prompt, generate(gpt, c.vocabulary, prompt, o.sample_chars, sampling, true, gen));
  }
  for (double temperature : {0.5, 1.2}) {
    Generator gen(o.seed + 8);
    t.say("Temperature {}, all characters:\n{}\n\n", temperature,
          generate(gpt, c.vocabulary, "\n", 200, {.temperature = temperature}, true, gen));
  }
  double per_second[2];
  for (bool cache : {false, true}) {
    Generator gen(o.seed + 9);
    const auto start = std::chrono::steady_clock::now();
    generate(gpt, c.vocabulary, "\n", o.sample_chars, sampling, cache, gen);
    per_second[cache] = static_cast<double>(o.sample_chars) / seconds_since(start);
  }
  t.say("Characters per second: {:.0f} without the key/value cache, {:.0f} with it ({:.1f}x).\n",
        per_second[0], per_second[1], per_second[1] / per_second[0]);
}

int run(const Options& o) {
  app::make_output_folder(o.out);
  const auto start = std::chrono::steady_clock::now();
  Transcript t;
  t.say("Lesson 12: a character-level GPT (seed {}, outputs in {})\n", o.seed, o.out);
  const data::CharCorpus corpus = data::split_corpus(load_text(t, o), 0.9);
  describe_corpus(t, corpus);
  Generator gen(o.seed);
  const NDArray validation_windows =
      data::sample_windows(corpus.validation, o.eval_batches * o.batch, o.context + 1, gen);

  t.heading("2. The model");
  Gpt gpt({.vocabulary = corpus.vocabulary.size(),
           .context = o.context,
           .d_model = o.d_model,
           .layers = o.layers,
           .heads = o.heads},
          gen);
  t.say("{}", gpt.summary());

  t.heading("3. Count models");
  const CountBaselines counts =
      count_baselines(corpus.train, corpus.validation, corpus.vocabulary.size());
  t.say("unigram {:.3f} nats/char, bigram {:.3f} (add-one smoothing, whole validation text)\n",
        counts.unigram, counts.bigram);

  t.heading("4. Training the GPT");
  t.say("AdamW lr {}, batches of {} windows of {} characters, {} s.\n", o.lr, o.batch, o.context,
        o.seconds);
  std::vector<std::pair<std::string, TrainResult>> runs;
  runs.emplace_back("GPT", train_language_model(
                               gpt, [&](const Tensor& x) { return gpt.forward(x); }, corpus.train,
                               validation_windows, o, gen));
  std::vector<Row> rows = {
      {"unigram counts", corpus.vocabulary.size(), 0, 0, counts.unigram},
      {"bigram counts", corpus.vocabulary.size() * corpus.vocabulary.size(), 0, 0, counts.bigram},
      {"GPT", gpt.parameter_count(), runs[0].second.steps, runs[0].second.seconds,
       runs[0].second.validation_loss}};
  if (o.gru) {
    t.heading("5. A GRU of the same size, for the same time");
    GruLm gru(corpus.vocabulary.size(),
              gru_hidden_for(corpus.vocabulary.size(), gpt.parameter_count()), gen);
    t.say("{}", gru.summary());
    runs.emplace_back("GRU", train_language_model(
                                 gru, [&](const Tensor& x) { return gru.forward(x); }, corpus.train,
                                 validation_windows, o, gen));
    rows.push_back({gru.describe(), gru.parameter_count(), runs[1].second.steps,
                    runs[1].second.seconds, runs[1].second.validation_loss});
  }
  t.say("\nValidation loss on {} windows of {} characters from the last 10% (every position):\n",
        validation_windows.size(0), o.context);
  print_table(t, rows);
  plot_training(runs, o.out, t);

  section_samples(t, gpt, corpus, o);
  t.heading("7. What the heads do");
  report_heads(
      t, gpt, corpus.vocabulary, corpus.validation,
      corpus.vocabulary.decode(std::span(corpus.validation)
                                   .first(std::min<std::size_t>(corpus.validation.size(), 4000))),
      o.out, o.seed);
  if (o.induction_steps > 0) section_induction(t, o);
  t.say("\nTotal time {:.1f} s. Wrote {}/summary.txt.\n", seconds_since(start), o.out);
  t.save(o.out + "/summary.txt");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "12_gpt",
          "Lesson 12: a character-level GPT trained on Jane Austen's novels, against count "
          "models and a GRU; samples, heads, induction heads (docs/12_gpt.md).");
  if (o.long_run) apply_long_preset(o);
  return app::run_program([&] { return run(o); });
}
