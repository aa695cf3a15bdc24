// Section 6 of the program: RNNsearch on German-English sentence pairs from the FreeDict
// dictionary, trained with the library's loop, scored by corpus BLEU-4 (greedy and beam
// search), and the attention of its best short translations.
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "lesson.h"

namespace attend::lesson07 {
namespace {

constexpr std::size_t kSentenceHeatmaps = 4;
constexpr std::size_t kHeatmapWords = 8;
constexpr Index kMaxTranslationLength = 30;  // words, <eos> included

std::vector<Words> words_of_all(const TranslationTask& task,
                                const std::vector<seq::Decoded>& decoded) {
  std::vector<Words> out;
  for (const seq::Decoded& d : decoded) out.push_back(words_of(task.target_vocabulary, d.tokens));
  return out;
}

void say_bleu(app::Transcript& t, const std::string& name, const seq::Bleu& b) {
  t.say(
      "  {:<16} BLEU-4 {:5.2f}   p1..p4 {:.3f} {:.3f} {:.3f} {:.3f}   BP {:.3f} (c = {}, r = {})\n",
      name, 100 * b.score, b.precisions[0], b.precisions[1], b.precisions[2], b.precisions[3],
      b.brevity_penalty, b.candidate_length, b.reference_length);
}

TranslationTask load_translation_task(app::Transcript& t, const Options& o) {
  std::vector<data::SentencePair> pairs = data::load_freedict_sentences();
  if (o.de_en_max_pairs > 0 && static_cast<std::size_t>(o.de_en_max_pairs) < pairs.size())
    pairs.resize(static_cast<std::size_t>(o.de_en_max_pairs));
  const std::size_t count = pairs.size();
  TranslationTask task =
      make_translation_task(std::move(pairs), static_cast<std::size_t>(o.de_en_validation),
                            static_cast<std::size_t>(o.de_en_test), o.seed, o.min_count);
  t.say(
      "{} sentence pairs from the FreeDict German-English dictionary: {} to train, {} to\n"
      "validate, {} held out. Words seen at least {} times in the training part: {} German, {}\n"
      "English (with the 4 special tokens); <unk> replaces {:.1f}% of the held-out German words\n"
      "and {:.1f}% of the English ones.\n",
      count, task.train_source.size(), task.validation_source.size(), task.test_source.size(),
      o.min_count, task.source_vocabulary.size(), task.target_vocabulary.size(),
      100 * unknown_share(task.source_vocabulary, task.test_source),
      100 * unknown_share(task.target_vocabulary, task.test_target));
  return task;
}

// Trains on the pairs. Validation: the loss of teacher forcing on the validation pairs after
// every epoch. Trained longer than the default (--de-en-epochs), the model starts to learn the
// 7,000 training pairs by heart and the validation loss rises again, so the parameters of the
// epoch with the lowest one are kept.
void train_translation(app::Transcript& t, seq::AttentionSeq2Seq& model,
                       const TranslationTask& task, const Options& o, Generator& gen) {
  std::vector<Index> lengths;
  for (const Words& s : task.train_source) lengths.push_back(static_cast<Index>(s.size()));
  auto batches = [&] {
    std::vector<seq::Batch> out;
    for (const auto& rows : seq::length_sorted_batches(lengths, o.batch_size, gen))
      out.push_back(translation_batch(task, task.train_source, task.train_target, rows));
    return out;
  };
  std::vector<std::size_t> all_rows(task.validation_source.size());
  for (std::size_t i = 0; i < all_rows.size(); ++i) all_rows[i] = i;
  const std::vector<seq::Batch> validation = {
      translation_batch(task, task.validation_source, task.validation_target, all_rows)};
  std::vector<double> validation_loss;
  std::vector<NDArray> best_parameters;
  std::size_t best_epoch = 0;
  auto validate = [&] {
    const seq::HeldOutLoss v = seq::held_out_loss(model, validation);
    validation_loss.push_back(v.loss);
    if (v.loss <= *std::min_element(validation_loss.begin(), validation_loss.end())) {
      best_epoch = validation_loss.size();
      best_parameters.clear();
      for (const Tensor& p : model.parameters()) best_parameters.push_back(p.data().clone());
    }
    return v.token_accuracy;
  };
  const seq::TrainingResult r = seq::train(model, batches, validate,
                                           {.max_epochs = o.de_en_epochs,
                                            .seconds = o.de_en_seconds,
                                            .learning_rate = o.lr,
                                            .clip_norm = o.clip,
                                            .stop_at = 2.0,  // never: the budget decides
                                            .log_path = o.out + "/training_de_en.csv",
                                            .label = "sentences",
                                            .progress = o.progress});
  for (int e = 0; e < r.epochs; ++e)
    t.say(
        "  epoch {:2}  train loss {:.3f}  validation loss {:.3f}  validation next-word "
        "accuracy {:.1f}%\n",
        e + 1, r.train_loss[static_cast<std::size_t>(e)],
        validation_loss[static_cast<std::size_t>(e)],
        100 * r.validation_score[static_cast<std::size_t>(e)]);
  t.say(
      "{} steps in {:.1f} s ({}). Kept the parameters of epoch {}, the lowest validation "
      "loss.\n",
      r.steps, r.seconds, r.out_of_time ? "stopped by the time budget" : "all epochs done",
      best_epoch);
  const std::vector<Tensor> parameters = model.parameters();
  for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].data() = best_parameters[i];
}

// The heatmaps: the short held-out sentences (at most kHeatmapWords words) that the model
// translates best. Where the translation is right, the alignment can be read. The same maps
// go to the interactive viewer (docs/viewer.md) as the run "<out>/de_en", with each
// sentence's BLEU beside its map.
void draw_sentence_heatmaps(app::Transcript& t, const TranslationTask& task,
                            const std::vector<seq::Decoded>& beam_out, const Options& o) {
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < task.test_source.size(); ++i)
    if (task.test_source[i].size() <= kHeatmapWords)
      ranked.emplace_back(-seq::sentence_bleu(words_of(task.target_vocabulary, beam_out[i].tokens),
                                              task.test_target[i]),
                          i);
  std::sort(ranked.begin(), ranked.end());
  t.say(
      "\nThe {} short held-out sentences (at most {} words) with the best sentence BLEU, and\n"
      "their attention (beam search):\n",
      kSentenceHeatmaps, kHeatmapWords);
  viz::AttentionRun run{.lesson = "07_bahdanau",
                        .title =
                            "RNNsearch's attention over the German words of its best short "
                            "held-out translations (beam search)",
                        .kind = "sequence",
                        .seed = o.seed,
                        .flags = fmt::format("--score {} --de-en-hidden {} --beam {}", o.score,
                                             o.de_en_hidden, o.beam)};
  for (std::size_t k = 0; k < ranked.size() && k < kSentenceHeatmaps; ++k) {
    const std::size_t i = ranked[k].second;
    const Words& source = task.test_source[i];
    const Words output = words_of(task.target_vocabulary, beam_out[i].tokens);
    const viz::AttentionExample& e =
        run.examples.emplace_back(sentence_example(task, source, beam_out[i], -ranked[k].first));
    const std::string png = fmt::format("{}/attention_de_en_{}.png", o.out, k + 1);
    viz::plot_attention(
        png, interpret::attention_matrix(beam_out[i].weights, static_cast<Index>(source.size())),
        e.target, e.source, e.name);
    t.say("  {}\n    model:     {}\n    reference: {}   (sentence BLEU {:.1f})\n    -> {}\n",
          fmt::join(source, " "), fmt::join(output, " "), fmt::join(task.test_target[i], " "),
          -100 * ranked[k].first, png);
  }
  if (run.examples.empty()) return;
  t.say("Wrote {}/de_en/attention.json (these maps); to explore them, open {}.\n", o.out,
        viz::write_attention_run(o.out, run, "de_en").string());
}

}  // namespace

viz::AttentionExample sentence_example(const TranslationTask& task, const Words& source,
                                       const Decoded& decoded, double bleu) {
  viz::AttentionExample e{.name = fmt::format("{}", fmt::join(source, " ")),
                          .target = seq::output_labels(task.target_vocabulary, decoded)};
  for (const std::string& w : source)
    e.source.push_back(task.source_vocabulary.contains(w) ? w : w + " (unk)");
  e.maps.push_back({.values = viz::map_rows(interpret::attention_matrix(
                        decoded.weights, static_cast<Index>(source.size()))),
                    .scores = {{"sentence BLEU", bleu}}});
  return e;
}

TranslationResults translate_german(app::Transcript& t, const Options& o) {
  t.heading("6. German to English");
  const TranslationTask task = load_translation_task(t, o);
  Generator gen(o.seed + 1);
  seq::AttentionSeq2Seq model(
      {task.source_vocabulary.size(), task.target_vocabulary.size(), o.de_en_embedding,
       o.de_en_hidden, o.de_en_attention, o.de_en_maxout},
      seq::parse_scoring(o.score), seq::parse_readout(o.readout), gen);
  t.say("Model: m = {}, n = {}, n' = {}, {} parameters.\n", o.de_en_embedding, o.de_en_hidden,
        o.de_en_attention, model.parameter_count());
  train_translation(t, model, task, o, gen);

  model.eval();
  const seq::BeamOptions greedy{.width = 1, .max_length = kMaxTranslationLength};
  const std::vector<seq::Decoded> greedy_out = translate(model, task, task.test_source, greedy);
  const seq::Bleu greedy_bleu = seq::corpus_bleu(words_of_all(task, greedy_out), task.test_target);
  const auto beam_start = std::chrono::steady_clock::now();
  const std::vector<seq::Decoded> beam_out = translate(
      model, task, task.test_source,
      {.width = o.beam, .max_length = kMaxTranslationLength, .length_penalty = o.length_penalty});
  const seq::Bleu beam_bleu = seq::corpus_bleu(words_of_all(task, beam_out), task.test_target);
  t.say("Held-out corpus BLEU-4 on {} sentences:\n", task.test_source.size());
  say_bleu(t, "greedy", greedy_bleu);
  say_bleu(t, fmt::format("beam width {}", o.beam), beam_bleu);
  t.say("(beam search took {:.1f} s)\n", app::seconds_since(beam_start));
  // The same measure on sentences the model was trained on: how much it learned by heart.
  const std::size_t seen = std::min(task.train_source.size(), task.test_source.size());
  const std::vector<Words> seen_source(
      task.train_source.begin(), task.train_source.begin() + static_cast<std::ptrdiff_t>(seen));
  const std::vector<Words> seen_target(
      task.train_target.begin(), task.train_target.begin() + static_cast<std::ptrdiff_t>(seen));
  say_bleu(t, "greedy, train",
           seq::corpus_bleu(words_of_all(task, translate(model, task, seen_source, greedy)),
                            seen_target));
  t.say("(the last line: {} training sentences, for comparison)\n", seen);
  draw_sentence_heatmaps(t, task, beam_out, o);
  return {greedy_bleu.score, beam_bleu.score};
}

}  // namespace attend::lesson07
