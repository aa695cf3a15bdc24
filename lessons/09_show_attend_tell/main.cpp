// Lesson 09: Show, Attend and Tell with soft attention. Run it and read
// docs/09_show_attend_tell.md next to it:
//
//   ./build/bin/09_show_attend_tell                      # seed 0, into output/09_show_attend_tell
//   ./build/bin/09_show_attend_tell --image my.png       # caption your own picture too
//   ./build/bin/09_show_attend_tell --help               # the flags
//
// The sections follow the chapter: the canvases, the encoder, the decoder trained, the
// captions scored, where the attention looks (and that it moves), the lambda table, the
// figures, and your own image.
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "lessons/09_show_attend_tell/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"

using namespace attend;
using namespace attend::lesson09;
using attend::lessons::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::uint64_t seed = 0;    // --seed: canvases, initial weights, shuffling
  bool synthetic = false;    // --synthetic: generated patterns instead of Fashion-MNIST
  bool all_classes = false;  // --all-classes: all 10 item classes, not kCaptionClasses' 5
  Index train = 24000;       // --train: training canvases (twice 12,000 for 6 epochs beat 12)
  Index validation = 300;    // --validation: held-out canvases scored after each epoch
  Index test = 500;          // --test: held-out canvases of the final scores
  // The encoder's pre-training (lesson.h, PretrainOptions, has the defaults and the why).
  Index encoder_steps = PretrainOptions{}.steps;          // --encoder-steps: minibatches
  Index encoder_batch = PretrainOptions{}.batch;          // --encoder-batch: canvases in each
  Index encoder_canvas = PretrainOptions{}.canvas_size;   // --encoder-canvas: their side
  Index encoder_objects = PretrainOptions{}.max_objects;  // --encoder-objects: 1 to this many
  double encoder_lr = PretrainOptions{}.lr;               // --encoder-lr
  std::string encoder_cache = "output/encoders";  // --encoder-cache: where it is kept ("": not)
  int epochs = 6;                                 // --epochs: decoder training
  Index batch = 64;                               // --batch: captions per decoder step
  double lr = 3e-3;                // --lr: Adam's, for the decoder, along a cosine to a tenth
  double lambda = 0.0;             // --lambda: weight of the doubly stochastic regulariser
  double compare_lambda = 1.0;     // --compare-lambda: the other row of the lambda table
  bool lambda_table = true;        // --lambda-table: train the second model for the table
  bool init = true;                // --init: f_init from the mean region (--no-init: zeros)
  bool gate = true;                // --gate: the gating scalar beta (--no-gate: beta = 1)
  double dropout = 0.3;            // --dropout: on h_t in the deep output, in training (the
                                   // authors: 0.5; docs/09 section 3 has 0.1, 0.2, 0.3, 0.5)
  bool lstm_sees_content = false;  // --lstm-sees-content: all of z_t into the LSTM (the paper)
  Index beam = 3;                  // --beam: beam width (1 = greedy)
  Index strips = 500;              // --strips: PNG strips written (one per test caption)
  std::string image;               // --image: a picture of yours to caption
  std::string out = "output/09_show_attend_tell";
};

// Sizes of the REF-SAT model (shared/bench/ref_sat.py).
constexpr Index kEncoderChannels = 32, kFeatures = 64, kEmbedding = 32, kHidden = 128,
                kAttention = 64;
// The strips show the 64x64 canvas at this size, so that one cell is 16 pixels wide.
constexpr Index kStripPixels = 128;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

PipelineOptions pipeline_options(const Options& o) {
  return {.seed = o.seed,
          .synthetic = o.synthetic,
          .all_classes = o.all_classes,
          .train = o.train,
          .validation = o.validation,
          .test = o.test,
          .encoder = {.steps = o.encoder_steps,
                      .batch = o.encoder_batch,
                      .lr = o.encoder_lr,
                      .canvas_size = o.encoder_canvas,
                      .max_objects = o.encoder_objects},
          .encoder_cache = o.encoder_cache};
}

// Sections 1 and 2: the canvases, and the encoder pre-trained and frozen.
PreparedCanvases prepare(Transcript& t, const Options& o, Encoder& encoder) {
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
      kEncoderChannels, kFeatures, kFeatures, kGridSide, kGridSide, kGridSide * kGridSide,
      kFeatures, o.encoder_steps, o.encoder_batch, o.encoder_canvas, o.encoder_canvas,
      o.encoder_objects, kClasses, data::canvas_colors().size());
  const PipelineOptions pipeline = pipeline_options(o);
  PreparedCanvases p = prepare_canvases(pipeline, encoder);
  t.say("{} training, {} validation and {} test canvases of {}x{} pixels; {} words + 4 special.\n",
        o.train, o.validation, o.test, kCanvasSize, kCanvasSize, p.vocab.size() - 4);
  t.say("Items of {} classes: {}{}.\n", p.nouns.size(), fmt::join(p.nouns, ", "),
        o.all_classes ? " (--all-classes)" : " (--all-classes for all ten)");
  for (std::size_t i = 0; i < 3 && i < p.splits.test.size(); ++i)
    t.say("  test canvas {}: \"{}\"\n", i, data::caption_text(p.splits.test[i]));
  t.heading("2. The encoder, pre-trained and frozen");
  if (p.encoder_loaded_from.empty()) {
    t.say(
        "Pre-training loss (cells' class + cells' colour + item's class cross-entropies), per\n"
        "tenth of the run: {:.3f}\n",
        fmt::join(p.encoder_losses, " "));
    if (!o.encoder_cache.empty())
      t.say("Saved to {} for the next run (and lesson 10).\n", encoder_cache_file(pipeline));
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
  return p;
}

DecoderSizes sizes_for(const PreparedCanvases& d, const Options& o) {
  return {.vocab = d.vocab.size(),
          .features = kFeatures + kPositionFeatures,
          .embedding = kEmbedding,
          .hidden = kHidden,
          .attention = kAttention,
          .dropout = o.dropout,
          .lstm_sees_content = o.lstm_sees_content};
}

std::vector<EpochRecord> train(Transcript& t, const Options& o, const PreparedCanvases& d,
                               Decoder& decoder, double lambda, Generator& gen,
                               const std::string& log_name) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<EpochRecord> records = train_decoder(
      decoder, d.train_regions, d.splits.train, d.validation_regions, d.splits.validation, d.vocab,
      {.epochs = o.epochs,
       .batch = o.batch,
       .lr = o.lr,
       .lambda = lambda,
       .log_path = o.out + "/" + log_name + ".csv"},
      gen);
  for (const EpochRecord& r : records)
    t.say(
        "  epoch {:2d}: loss {:7.3f} = nll {:6.3f} + {} x penalty {:6.3f} | validation word "
        "accuracy {:.1f}%\n",
        r.epoch, r.loss, r.nll, lambda, r.penalty, 100 * r.validation_word_accuracy);
  t.say("Trained in {:.0f} s; per-epoch losses in {}/{}.csv.\n", seconds_since(start), o.out,
        log_name);
  return records;
}

void plot(const std::vector<EpochRecord>& records, const std::string& out) {
  viz::Series nll{"caption nll (train)"}, accuracy{"word accuracy (validation)"};
  accuracy.right_axis = true;
  for (const EpochRecord& r : records) {
    nll.add(r.epoch, r.nll);
    accuracy.add(r.epoch, r.validation_word_accuracy);
  }
  viz::plot_curves(out + "/training.png", {nll, accuracy},
                   {.title = "Soft attention: training",
                    .x_label = "epoch",
                    .y_label = "-log p(y|a) per caption",
                    .y2_label = "word accuracy"});
}

void print_scores(Transcript& t, const char* name, const CaptionScores& s) {
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
  return localisation(canvases, uniform, grid, kCanvasSize).mass_in_box;
}

// What the wrong captions got wrong: a few of them, and the reference words most often missed.
void section_mistakes(Transcript& t, const CaptionScores& s) {
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

void section_where(Transcript& t, const CaptionScores& s, const std::vector<CanvasExample>& test) {
  t.heading("5. Where the attention looks");
  const Localisation& w = s.where;
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

void section_gate(Transcript& t, Decoder& decoder, const PreparedCanvases& d) {
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

void write_strips(Transcript& t, const Options& o, Decoder& decoder, const PreparedCanvases& d) {
  t.heading("8. The figures");
  const std::string folder = o.out + "/strips";
  lessons::make_output_folder(folder);
  const Index count = std::min<Index>(o.strips, static_cast<Index>(d.splits.test.size()));
  for (Index i = 0; i < count; ++i) {
    const CanvasExample& canvas = d.splits.test[static_cast<std::size_t>(i)];
    Caption caption = beam_decode(decoder, rows(d.test_regions, {i}), std::max<Index>(1, o.beam));
    std::vector<NDArray> grids;
    for (const NDArray& a : caption.alphas) grids.push_back(a.reshape({kGridSide, kGridSide}));
    viz::write_attention_strip(fmt::format("{}/test_{:03d}.png", folder, i),
                               viz::resize_bilinear(canvas.image, kStripPixels, kStripPixels),
                               grids, words_of(caption, d.vocab));
  }
  t.say(
      "Wrote {} strips, {}/test_000.png ...: the canvas, then per generated word the\n"
      "attention map upsampled over it (with its grid of weights in the .txt beside each PNG).\n",
      count, folder);
}

void caption_image(Transcript& t, const Options& o, const NDArray& picture, Encoder& encoder,
                   Decoder& decoder, const PreparedCanvases& d) {
  t.heading("9. Your image");
  NDArray canvas = viz::resize_bilinear(picture, kCanvasSize, kCanvasSize);
  Tensor regions;
  {
    NoGradGuard no_graph;
    regions = encoder.regions(Tensor(canvas.reshape({1, 3, kCanvasSize, kCanvasSize})));
  }
  Caption caption = beam_decode(decoder, regions, std::max<Index>(1, o.beam));
  std::vector<NDArray> grids;
  for (const NDArray& a : caption.alphas) grids.push_back(a.reshape({kGridSide, kGridSide}));
  const std::string png = o.out + "/your_image.png";
  viz::write_attention_strip(png, viz::resize_bilinear(canvas, kStripPixels, kStripPixels), grids,
                             words_of(caption, d.vocab));
  t.say("{} ({}x{} pixels, resized to {}x{}): \"{}\"\nIts attention strip: {}\n", o.image,
        picture.size(2), picture.size(1), kCanvasSize, kCanvasSize,
        fmt::join(words_of(caption, d.vocab), " "), png);
}

int run(const Options& o) {
  if (o.train < o.batch) fail("--train must be at least --batch ({}), got {}", o.batch, o.train);
  if (o.validation < 1 || o.test < 1) fail("--validation and --test must be at least 1");
  if (o.beam < 1) fail("--beam must be at least 1, got {}", o.beam);
  if (o.lambda < 0) fail("--lambda must not be negative, got {}", o.lambda);
  // Read the learner's image first: a missing or broken file should not wait for training.
  NDArray picture;
  if (!o.image.empty()) picture = viz::read_image(o.image, viz::ColorMode::kRgb);
  lessons::make_output_folder(o.out);
  const auto start = std::chrono::steady_clock::now();
  Transcript t;
  t.say(
      "Lesson 09: Show, Attend and Tell, soft attention (seed {}, lambda {}, gate {}, beam {},\n"
      "outputs in {})\n",
      o.seed, o.lambda, o.gate ? "on" : "off", o.beam, o.out);
  Generator gen(o.seed);
  Encoder encoder(kEncoderChannels, kFeatures, encoder_labels(), gen);
  PreparedCanvases d = prepare(t, o, encoder);

  t.heading("3. The decoder: f_init, f_att, the gate, the LSTM and the deep output");
  Decoder decoder(sizes_for(d, o), gen);
  decoder.use_gate = o.gate;
  decoder.init_from_image = o.init;
  t.say(
      "{} parameters. Loss: -log p(y|a) summed over the caption + lambda sum_i (1 - sum_t\n"
      "alpha_ti)^2 with lambda = {}; Adam lr {}, batch {}, {} epochs.\n",
      decoder.parameter_count(), o.lambda, o.lr, o.batch, o.epochs);
  std::vector<EpochRecord> records = train(t, o, d, decoder, o.lambda, gen, "training");
  plot(records, o.out);

  t.heading("4. The captions of the held-out canvases");
  CaptionScores greedy = evaluate(decoder, d.test_regions, d.splits.test, d.vocab, 1);
  CaptionScores beam = evaluate(decoder, d.test_regions, d.splits.test, d.vocab, o.beam);
  print_scores(t, "greedy", greedy);
  print_scores(t, fmt::format("beam {}", o.beam).c_str(), beam);
  t.say("Targets: exact match >= 95%: {}; localisation (at the nouns) >= 90%: {}.\n",
        beam.exact_match >= 0.95 ? "met" : "NOT met",
        beam.where.noun_hit_rate >= 0.90 ? "met" : "NOT met");
  section_mistakes(t, beam);
  section_where(t, beam, d.splits.test);
  section_gate(t, decoder, d);

  if (o.lambda_table) {
    t.heading("7. What the doubly stochastic regulariser does");
    t.say("A second decoder, the same in every way but lambda = {}:\n", o.compare_lambda);
    Generator twin_gen(o.seed + 1000);
    Decoder twin(sizes_for(d, o), twin_gen);
    twin.use_gate = o.gate;
    twin.init_from_image = o.init;
    train(t, o, d, twin, o.compare_lambda, twin_gen, "training_compare_lambda");
    CaptionScores other = evaluate(twin, d.test_regions, d.splits.test, d.vocab, o.beam);
    t.say("\n  {:>7} {:>12} {:>8} {:>13} {:>13} {:>12} {:>11}\n", "lambda", "exact match", "BLEU-4",
          "loc. nouns", "loc. all", "mass in box", "moves (TV)");
    for (auto [lambda, s] : {std::pair{o.lambda, beam}, std::pair{o.compare_lambda, other}})
      t.say("  {:>7} {:>11.1f}% {:>8.1f} {:>12.1f}% {:>12.1f}% {:>11.1f}% {:>11.3f}\n", lambda,
            100 * s.exact_match, 100 * s.bleu4, 100 * s.where.noun_hit_rate, 100 * s.where.hit_rate,
            100 * s.where.mass_in_box, s.where.total_variation);
  }
  write_strips(t, o, decoder, d);
  if (picture.defined()) caption_image(t, o, picture, encoder, decoder, d);
  t.say("\nWhole run: {:.0f} s. Wrote {}/summary.txt, training.csv, training.png and strips/.\n",
        seconds_since(start), o.out);
  t.save(o.out + "/summary.txt");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lessons::CommandLine cli(
      "09_show_attend_tell",
      "Lesson 09: Show, Attend and Tell with soft attention on canvas captions: "
      "training, exact match, BLEU-4, localisation, the lambda table and "
      "attention strips (docs/09_show_attend_tell.md).");
  cli.add("seed", o.seed, "seed of the canvases, weights and shuffling");
  cli.add("synthetic", o.synthetic, "use generated patterns instead of Fashion-MNIST");
  cli.add("all-classes", o.all_classes,
          "put items of all 10 classes on the canvases (default: the 5 of kCaptionClasses)");
  cli.add("train", o.train, "training canvases");
  cli.add("validation", o.validation, "validation canvases");
  cli.add("test", o.test, "test canvases");
  cli.add("encoder-steps", o.encoder_steps, "minibatches of the encoder's pre-training");
  cli.add("encoder-lr", o.encoder_lr, "learning rate of the encoder's pre-training");
  cli.add("encoder-canvas", o.encoder_canvas, "side of the encoder's pre-training canvases");
  cli.add("encoder-objects", o.encoder_objects, "items on each pre-training canvas (1 to this)");
  cli.add("encoder-batch", o.encoder_batch, "canvases per pre-training minibatch");
  cli.add("encoder-cache", o.encoder_cache,
          "folder that keeps the pre-trained encoder for later runs (\"\": pre-train every time)");
  cli.add("epochs", o.epochs, "epochs of decoder training");
  cli.add("batch", o.batch, "captions per batch");
  cli.add("lr", o.lr, "Adam learning rate of the decoder");
  cli.add("lambda", o.lambda, "weight of the doubly stochastic regulariser");
  cli.add("compare-lambda", o.compare_lambda, "lambda of the second row of the lambda table");
  cli.add("lambda-table", o.lambda_table, "train a second decoder for the lambda table");
  cli.add("init", o.init, "f_init from the mean region (--no-init: from zeros)");
  cli.add("gate", o.gate, "the gating scalar beta (--no-gate: beta = 1)");
  cli.add("dropout", o.dropout, "dropout probability on h_t in the deep output (training only)");
  cli.add("lstm-sees-content", o.lstm_sees_content,
          "feed all of z_t to the LSTM, as the paper does (default: only where it looked)");
  cli.add("beam", o.beam, "beam width (1 = greedy)");
  cli.add("strips", o.strips, "how many test captions get a PNG strip");
  cli.add("image", o.image, "a picture (PNG, JPEG, BMP, ...) to caption");
  cli.add("out", o.out, "folder for summary.txt, CSV logs, plots and strips");
  cli.parse(argc, argv);
  return lessons::run_lesson([&] { return run(o); });
}
