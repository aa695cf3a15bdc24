// Lesson 09: what the sections of the program print (main.cpp runs them in order).
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "lesson.h"

namespace attend::lesson09 {

namespace {

// Section 2: the encoder's pre-training (or the cache it came from) and its accuracy.
void section_encoder(app::Transcript& t, const Options& o, const PreparedCanvases& p) {
  t.heading("2. The encoder, pre-trained and frozen");
  if (p.encoder_loaded_from.empty()) {
    t.say(
        "Pre-training loss (cells' class + cells' colour + item's class cross-entropies), per\n"
        "tenth of the run: {:.3f}\n",
        fmt::join(p.encoder_losses, " "));
    if (!o.encoder_cache.empty() && p.encoder_cache_error.empty())
      t.say("Saved to {} for the next run (and lesson 10).\n", encoder_cache_file(o.pipeline()));
    if (!p.encoder_cache_error.empty())
      t.say("Not saved for later runs: {}\n", p.encoder_cache_error);
  } else {
    t.say(
        "Loaded from {}, pre-trained by an earlier run with the same\n"
        "settings (delete it, or pass --encoder-cache \"\", to pre-train it again).\n",
        p.encoder_loaded_from);
  }
  t.say(
      "From the mean scores of the cells inside an item's box, it names the noun and the colour\n"
      "  of {} held-out single items (32x32 canvases):  {:.1f}% and {:.1f}%\n"
      "  of the {} objects of the test canvases:        {:.1f}% and {:.1f}%\n"
      "The second noun accuracy bounds what the captions can reach.\n",
      p.encoder_accuracy.objects, 100 * p.encoder_accuracy.noun, 100 * p.encoder_accuracy.colour,
      p.encoder_canvas_accuracy.objects, 100 * p.encoder_canvas_accuracy.noun,
      100 * p.encoder_canvas_accuracy.colour);
  t.say(
      "Regions of every canvas computed once: {} for the training set. Sections 1-2 took\n"
      "{:.0f} s.\n",
      p.train_regions.shape(), p.seconds);
}

void print_scores(app::Transcript& t, const char* name, const CaptionScores& s) {
  t.say("  {:<14} exact match {:5.1f}%   word accuracy {:5.1f}%   BLEU-4 {:5.1f}\n", name,
        100 * s.exact_match, 100 * s.word_accuracy, 100 * s.bleu4);
}

// The share of attention a uniform map would put inside the boxes: the chance level.
double uniform_mass(const std::vector<CanvasExample>& canvases) {
  const Index grid = kCanvasSize / 8;
  std::vector<NDArray> uniform;
  for (const CanvasExample& c : canvases)
    uniform.push_back(NDArray::full({static_cast<Index>(c.words.size()), grid * grid},
                                    1.0 / static_cast<double>(grid * grid)));
  return interpret::localisation(canvases, uniform, grid, kCanvasSize).mass_in_box;
}

// What the wrong captions got wrong: a few of them, and the reference words most often missed.
void section_mistakes(app::Transcript& t, const CaptionScores& s) {
  if (s.mistakes.empty()) return;
  t.say("Some wrong captions (reference -> generated):\n");
  for (const std::string& m : s.mistakes) t.say("  {}\n", m);
  std::vector<std::pair<Index, std::string>> missed;
  for (const auto& [word, count] : s.missed_words) missed.emplace_back(count, word);
  std::sort(missed.rbegin(), missed.rend());
  if (missed.size() > 6) missed.resize(6);
  t.say("Reference words most often missed at their position:");
  for (const auto& [count, word] : missed) t.say(" {} {},", word, count);
  t.say("\n");
}

}  // namespace

PreparedCanvases prepare(app::Transcript& t, const Options& o, RegionEncoder& encoder) {
  t.heading("1. The canvases");
  t.say("Items: {}.\n",
        o.synthetic ? "the generated stand-in for Fashion-MNIST (--synthetic)"
                    : "Fashion-MNIST; training canvases use its training pictures, held-out\n"
                      "canvases its test pictures, so every held-out object is new to the model");
  t.say(
      "CNN encoder: 3 x (conv 3x3 + ReLU + max-pool 2), {} -> {} -> {} channels: an {}x{} grid\n"
      "of L = {} regions a_i of D = {} features, plus each region's x and y. Pre-trained ({}\n"
      "minibatches of {} canvases of {}x{} pixels with 1 to {} items): every cell says what lies\n"
      "at its centre (one of {} classes or nothing) and its colour (one of {} or none); then\n"
      "frozen.\n",
      kEncoderChannels, kRegionFeatures, kRegionFeatures, kGridSide, kGridSide,
      kGridSide * kGridSide, kRegionFeatures, o.encoder_steps, o.encoder_batch, o.encoder_canvas,
      o.encoder_canvas, o.encoder_objects, kClasses, data::canvas_colors().size());
  PreparedCanvases p = prepare_canvases(o.pipeline(), encoder);
  t.say("{} training, {} validation and {} test canvases of {}x{} pixels; {} words + 4 special.\n",
        o.train, o.validation, o.test, kCanvasSize, kCanvasSize, p.vocab.size() - 4);
  t.say("Items of {} classes: {}{}.\n", p.nouns.size(), fmt::join(p.nouns, ", "),
        o.all_classes ? " (--all-classes)" : " (--all-classes for all ten)");
  for (std::size_t i = 0; i < 3 && i < p.splits.test.size(); ++i)
    t.say("  test canvas {}: \"{}\"\n", i, data::caption_text(p.splits.test[i]));
  section_encoder(t, o, p);
  return p;
}

CaptionDecoderSizes sizes_for(const PreparedCanvases& d, const Options& o) {
  // REF-SAT's sizes (the defaults), with the flags' dropout and LSTM input.
  return {.vocab = d.vocab.size(), .dropout = o.dropout, .lstm_sees_content = o.lstm_sees_content};
}

Training train(const Options& o, const PreparedCanvases& d, CaptionDecoder& decoder, double lambda,
               Generator& gen, const std::string& log_name, bool progress) {
  const auto start = std::chrono::steady_clock::now();
  Training training;
  training.lambda = lambda;
  training.log_name = log_name;
  training.records = train_decoder(decoder, d.train_regions, d.splits.train, d.validation_regions,
                                   d.splits.validation, d.vocab,
                                   {.epochs = o.epochs,
                                    .batch = o.batch,
                                    .lr = o.lr,
                                    .lambda = lambda,
                                    .log_path = o.out + "/" + log_name + ".csv",
                                    .progress = progress},
                                   gen);
  training.seconds = app::seconds_since(start);
  return training;
}

void print_training(app::Transcript& t, const Options& o, const Training& training) {
  for (const CaptionEpoch& r : training.records)
    t.say(
        "  epoch {:2d}: loss {:7.3f} = nll {:6.3f} + {} x penalty {:6.3f} | validation word "
        "accuracy {:.1f}%\n",
        r.epoch, r.loss, r.nll, training.lambda, r.penalty, 100 * r.validation_word_accuracy);
  t.say("Trained in {:.0f} s; per-epoch losses in {}/{}.csv.\n", training.seconds, o.out,
        training.log_name);
}

void section_captions(app::Transcript& t, const Options& o, const CaptionScores& greedy,
                      const CaptionScores& beam) {
  t.heading("4. The captions of the held-out canvases");
  print_scores(t, "greedy", greedy);
  print_scores(t, fmt::format("beam {}", o.beam).c_str(), beam);
  t.say("Targets: exact match >= 95%: {}; localisation (at the nouns) >= 90%: {}.\n",
        beam.exact_match >= 0.95 ? "met" : "NOT met",
        beam.where.noun_hit_rate >= 0.90 ? "met" : "NOT met");
  section_mistakes(t, beam);
}

void section_where(app::Transcript& t, const CaptionScores& s,
                   const std::vector<CanvasExample>& test) {
  t.heading("5. Where the attention looks");
  const interpret::Localisation& w = s.where;
  t.say(
      "With the reference caption fed in: is the most attended region (its centre) inside the\n"
      "box of the object the word is about?\n");
  t.say("  at the nouns, the words that name an object (\"bag\"): {:5.1f}%   <- localisation\n",
        100 * w.noun_hit_rate);
  t.say("  at the colour words (\"red\"):                          {:5.1f}%\n",
        100 * w.colour_hit_rate);
  t.say("  at the word before an object (\"a\"), its next object:  {:5.1f}%\n",
        100 * w.before_hit_rate);
  t.say("  at all {} object words (colours and nouns):          {:5.1f}%\n", w.object_words,
        100 * w.hit_rate);
  t.say(
      "  attention mass inside the box, at object words: {:.1f}% on average (uniform map: "
      "{:.1f}%)\n",
      100 * w.mass_in_box, 100 * uniform_mass(test));
  t.heading("6. Not static saliency: the map moves with the word");
  t.say(
      "On the {} test canvases with 2 or 3 objects, compare the attention at the first\n"
      "object's noun with the attention at the second object's noun:\n",
      w.multi_object_canvases);
  t.say("  the most attended region differs in {:.1f}% of them (a static map: 0%)\n",
        100 * w.argmax_changes);
  t.say(
      "  mean total-variation distance 1/2 sum_i |alpha_i - alpha'_i| = {:.3f} (static: 0;\n"
      "  disjoint maps: 1)\n",
      w.total_variation);
}

void section_gate(app::Transcript& t, CaptionDecoder& decoder, const PreparedCanvases& d) {
  // Mean beta at object words and at the grammar's words ("a", "left", "of", "above").
  NoGradGuard no_graph;
  std::vector<Index> indices;
  std::vector<const CanvasExample*> batch;
  for (std::size_t i = 0; i < std::min<std::size_t>(256, d.splits.test.size()); ++i) {
    indices.push_back(static_cast<Index>(i));
    batch.push_back(&d.splits.test[i]);
  }
  CaptionBatch captions = make_caption_batch(batch, d.vocab);
  NDArray betas =
      unroll(decoder, rows(d.test_regions, indices), captions.inputs).betas.data().to(kFloat64);
  double object_sum = 0, other_sum = 0;
  Index object_count = 0, other_count = 0;
  for (std::size_t b = 0; b < batch.size(); ++b)
    for (std::size_t w = 0; w < batch[b]->words.size(); ++w) {
      const double beta = betas.at({static_cast<Index>(b), static_cast<Index>(w)});
      if (batch[b]->word_object[w] >= 0) {
        object_sum += beta;
        ++object_count;
      } else {
        other_sum += beta;
        ++other_count;
      }
    }
  t.say(
      "The gate beta = sigmoid(f_beta(h_t-1)): mean {:.3f} before an object word, {:.3f}\n"
      "before a grammar word (\"a\", \"left\", \"of\", \"above\").\n",
      object_sum / std::max<Index>(1, object_count), other_sum / std::max<Index>(1, other_count));
}

void lambda_table(app::Transcript& t,
                  const std::vector<std::pair<double, CaptionScores>>& rows_by_lambda) {
  t.say("\n  {:>7} {:>12} {:>8} {:>13} {:>13} {:>12} {:>11}\n", "lambda", "exact match", "BLEU-4",
        "loc. nouns", "loc. all", "mass in box", "moves (TV)");
  for (const auto& [lambda, s] : rows_by_lambda)
    t.say("  {:>7} {:>11.1f}% {:>8.1f} {:>12.1f}% {:>12.1f}% {:>11.1f}% {:>11.3f}\n", lambda,
          100 * s.exact_match, 100 * s.bleu4, 100 * s.where.noun_hit_rate, 100 * s.where.hit_rate,
          100 * s.where.mass_in_box, s.where.total_variation);
}

}  // namespace attend::lesson09
