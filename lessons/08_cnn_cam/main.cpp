// Lesson 08: CNN features and class activation maps. Run it and read docs/08_cnn_cam.md next
// to it:
//
//   ./build/bin/08_cnn_cam                # Fashion-MNIST canvases, seed 0, output/08_cnn_cam
//   ./build/bin/08_cnn_cam --synthetic    # the generated stand-in, no data files needed
//   ./build/bin/08_cnn_cam --help         # the flags
//
// The sections follow the chapter: the canvases, the CNN and its 8x8 grid of region features,
// multi-label training, held-out accuracy, CAM and Grad-CAM, the pointing game, the figures.
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "lessons/08_cnn_cam/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"

using namespace attend;
using namespace attend::lesson08;
using attend::lessons::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::uint64_t seed = 0;                          // --seed
  Index train = DataOptions{}.train;               // --train: training canvases
  Index validation = DataOptions{}.validation;     // --validation: scored after each epoch
  Index test = DataOptions{}.test;                 // --test: held-out canvases, final scores
  int epochs = TrainOptions{}.epochs;              // --epochs
  Index batch = TrainOptions{}.batch;              // --batch: canvases per step
  double lr = TrainOptions{}.lr;                   // --lr: Adam's peak learning rate
  double tolerance = PointingOptions{}.tolerance;  // --tolerance: pointing-game pixels
  int figures = 6;                                 // --figures: test canvases in maps.png
  bool standardize = true;                         // --standardize: section 2
  bool synthetic = false;                          // --synthetic: generated pictures
  bool progress = true;                            // --progress: the line on stderr
  std::string data = data::kFashionMnistFolder;    // --data
  std::string out = "output/08_cnn_cam";           // --out
};

// Figures magnify the 64-pixel canvases this many times.
constexpr Index kZoom = 2;
// How many training canvases canvases.png shows, in two rows.
constexpr int kExampleCanvases = 8;
// How many test canvases section 2 measures the initial features on.
constexpr Index kFeatureProbe = 32;

// Canvas i of a set as an image [3, S, S].
NDArray canvas_image(const CanvasSet& set, Index i) {
  return slice(set.images, 0, i, i + 1).reshape({3, set.images.size(2), set.images.size(3)});
}

// "coat, bag, bag": the caption nouns of a canvas's objects, for figure captions.
std::string noun_list(const std::vector<data::CanvasObject>& objects,
                      const std::vector<std::string>& nouns) {
  std::vector<std::string> words;
  for (const data::CanvasObject& o : objects)
    words.push_back(nouns[static_cast<std::size_t>(o.label)]);
  return fmt::format("{}", fmt::join(words, ", "));
}

LessonData section_data(Transcript& t, const Options& o) {
  t.heading("1. Canvases: which classes, and where");
  LessonData d = make_lesson_data({.train = o.train,
                                   .validation = o.validation,
                                   .test = o.test,
                                   .seed = o.seed,
                                   .synthetic = o.synthetic,
                                   .folder = o.data});
  t.say("{} pictures: {} training, {} validation and {} test canvases of {}x{} pixels.\n",
        o.synthetic ? "Synthetic stand-in" : "Fashion-MNIST", d.train.size(), d.validation.size(),
        d.test.size(), d.train.images.size(2), d.train.images.size(3));
  t.say("Training canvases use the training pictures, validation and test canvases the test\n");
  t.say("pictures: held-out canvases show items the model never saw.\n");
  const std::vector<Index> train_counts = class_counts(d.train), test_counts = class_counts(d.test);
  t.say("\n{:<22} {:>10} {:>10}\n", "class", "train", "test");
  for (std::size_t c = 0; c < d.class_names.size(); ++c)
    t.say("{:<22} {:>10} {:>10}\n", d.class_names[c], train_counts[c], test_counts[c]);

  double objects = 0, classes = 0, box_area = 0;
  for (const auto& canvas : d.test.objects)
    for (const data::CanvasObject& object : canvas) {
      objects += 1;
      box_area +=
          static_cast<double>((object.box.x1 - object.box.x0) * (object.box.y1 - object.box.y0));
    }
  for (Index c : test_counts) classes += static_cast<double>(c);
  const double canvases = static_cast<double>(d.test.size());
  const double area = static_cast<double>(d.test.images.size(2) * d.test.images.size(3));
  t.say("A test canvas holds {:.2f} objects of {:.2f} different classes on average;\n",
        objects / canvases, classes / canvases);
  t.say("one object's box covers {:.1f}% of the canvas.\n", 100 * box_area / objects / area);

  const std::vector<std::string> nouns = data::caption_nouns(d.class_names);
  std::vector<std::vector<Panel>> rows(2);
  for (Index i = 0; i < std::min<Index>(kExampleCanvases, d.train.size()); ++i) {
    const auto& on_canvas = d.train.objects[static_cast<std::size_t>(i)];
    rows[static_cast<std::size_t>(i * 2 / kExampleCanvases)].push_back(
        canvas_panel(canvas_image(d.train, i), on_canvas, kZoom, noun_list(on_canvas, nouns)));
  }
  if (rows[1].empty()) rows.pop_back();
  write_panels(o.out + "/canvases.png", rows);
  t.say("Wrote {}/canvases.png: training canvases, their boxes (cyan) and classes.\n", o.out);
  return d;
}

// The mean of the encoder's features on a few test canvases: how large they start.
double mean_feature(CamClassifier& model, const CanvasSet& set) {
  NoGradGuard no_graph;
  const Tensor images(slice(set.images, 0, 0, std::min(kFeatureProbe, set.size())));
  return mean(model.encoder(images).data()).item();
}

void section_model(Transcript& t, const Options& o, CamClassifier& model, const LessonData& d) {
  t.heading("2. The CNN: an 8x8 grid of region features, pooled, then one linear layer");
  t.say("{}", model.summary());
  {
    NoGradGuard no_graph;
    const Tensor two(slice(d.test.images, 0, 0, std::min<Index>(2, d.test.size())));
    const Tensor features = model.encoder(two);
    t.say("images {} -> encoder -> features {}: {} regions of {} numbers per canvas,\n",
          two.shape(), features.shape(), features.size(2) * features.size(3), features.size(1));
    t.say("each region {}x{} pixels. GAP -> {} -> linear -> logits {}.\n",
          two.size(2) / features.size(2), two.size(3) / features.size(3),
          Shape{features.size(0), features.size(1)}, model.forward(two).shape());
  }
  const double raw = mean_feature(model, d.test);
  if (!o.standardize) {
    t.say("--no-standardize: raw pixels in, class biases at 0.\n");
    t.say("The mean feature at initialisation is {:.4f}.\n", raw);
    return;
  }
  const PixelStatistics s = pixel_statistics(d.train.images);
  model.encoder.set_input_statistics(s.mean, s.std);
  initialise_class_priors(model, d.train);
  t.say("The training pixels have mean {:.4f} and standard deviation {:.4f} (mostly black).\n",
        s.mean, s.std);
  t.say("Standardising them, (x - mean) / std, raises the mean feature at initialisation\n");
  t.say("from {:.4f} to {:.4f}. The class biases start at the log-odds of the class\n", raw,
        mean_feature(model, d.test));
  t.say("frequencies, e.g. {:.3f} for {}.\n", model.classifier.bias.data().at({0}),
        d.class_names[0]);
}

void section_training(Transcript& t, const Options& o, CamClassifier& model, const LessonData& d) {
  t.heading("3. Training: one binary cross-entropy per class");
  t.say("Adam, peak lr {} with a cosine decay to lr/10, {} epochs of {} canvases, batches of {}.\n",
        o.lr, o.epochs, d.train.size(), o.batch);
  viz::CsvLog log(o.out + "/metrics.csv",
                  {"epoch", "train_loss", "validation_loss", "validation_map", "seconds"});
  viz::Series train_loss{"training loss"}, validation_loss{"validation loss"};
  viz::Series validation_map{"validation mAP", {}, {}, /*right_axis=*/true};
  auto after_epoch = [&](const EpochRecord& r) {
    t.say("epoch {}: training loss {:.4f}, validation loss {:.4f}, validation mAP {:.3f}", r.epoch,
          r.train_loss, r.validation_loss, r.validation_map);
    t.say(" ({:.0f} s)\n", r.seconds);
    log.write_values(
        {double(r.epoch), r.train_loss, r.validation_loss, r.validation_map, r.seconds});
    train_loss.add(r.epoch, r.train_loss);
    validation_loss.add(r.epoch, r.validation_loss);
    validation_map.add(r.epoch, r.validation_map);
  };
  train_classifier(model, d.train, d.validation,
                   {.epochs = o.epochs,
                    .batch = o.batch,
                    .lr = o.lr,
                    .shuffle_seed = o.seed,
                    .progress = o.progress},
                   after_epoch);
  const bool drawn =
      viz::plot_curves(o.out + "/training.png", {train_loss, validation_loss, validation_map},
                       {.title = "Multi-label training on canvases",
                        .x_label = "epoch",
                        .y_label = "binary cross-entropy",
                        .y2_label = "mAP"});
  t.say("Wrote {}/metrics.csv{}.\n", o.out, drawn ? " and training.png" : "");
}

void section_classification(Transcript& t, CamClassifier& model, const LessonData& d) {
  t.heading("4. Which classes are on a held-out canvas?");
  model.eval();
  ClassificationReport r = evaluate_classifier(predict_logits(model, d.test.images), d.test.labels);
  t.say("{:<22} {:>8} {:>10} {:>8}\n", "class", "canvases", "AP", "F1");
  double prevalence = 0;
  for (std::size_t c = 0; c < d.class_names.size(); ++c) {
    t.say("{:<22} {:>8} {:>10.3f} {:>8.3f}\n", d.class_names[c], r.support[c],
          r.average_precision[c], r.f1[c]);
    prevalence += static_cast<double>(r.support[c]) / static_cast<double>(d.test.size());
  }
  prevalence /= static_cast<double>(d.class_names.size());
  t.say("test mAP {:.3f} (random scores: about {:.3f}, the mean share of canvases with a class);\n",
        r.mean_average_precision, prevalence);
  t.say("macro F1 {:.3f}; whole label set exactly right on {:.1f}% of the canvases; loss {:.4f}.\n",
        r.macro_f1, 100 * r.exact_match, r.loss);
}

void section_identity(Transcript& t, const PointingResults& p) {
  t.heading("5. CAM = Grad-CAM on the last grid");
  t.say(
      "For a GAP + linear head dy^c/dA^k_ij = w_k^c / Z, so Grad-CAM = ReLU(CAM) / Z (Z = 64).\n");
  t.say("Largest |Z * Grad-CAM - ReLU(CAM)| over {} maps, relative to the largest |CAM|: {:.2e}.\n",
        p.pairs.size(), p.identity_gap);
  t.say("Their largest pixel is the same in {} of {} pairs. Pairs whose CAM has no positive\n",
        p.same_point, p.pairs.size());
  t.say("cell, where Grad-CAM is 0 everywhere and its largest pixel is the first one: {}.\n",
        p.no_positive_cam);
  t.say("In the other pairs the two maxima are at most {:.1f} pixels apart: next to a negative\n",
        p.largest_shift);
  t.say("cell the ReLU changes the bilinear interpolation around the peak.\n");
}

// The per-class table of section 6, printed and drawn as pointing_game.png.
void per_class_table(Transcript& t, const Options& o, const PointingResults& p,
                     const std::vector<std::string>& names) {
  const int columns[] = {kCam, kGradCam16, kBrightness};
  t.say("\nPer class (hit rate):\n{:<22} {:>6} {:>8} {:>10} {:>11} {:>8}\n", "class", "pairs",
        "CAM", "Grad-CAM16", "brightness", "random");
  NDArray table = NDArray::zeros({static_cast<Index>(names.size()), 4}, kFloat64);
  for (std::size_t c = 0; c < names.size(); ++c) {
    const auto label = static_cast<Index>(c);
    std::vector<double> row;
    for (int kind : columns) row.push_back(p.all[kind].class_hit_rate(label));
    row.push_back(p.expected_all.class_hit_rate(label));
    t.say("{:<22} {:>6} {:>8.3f} {:>10.3f} {:>11.3f} {:>8.3f}\n", names[c],
          p.all[kCam].pairs(label), row[0], row[1], row[2], row[3]);
    for (Index k = 0; k < 4; ++k) table.set({label, k}, row[static_cast<std::size_t>(k)]);
  }
  const bool drawn = viz::plot_heatmap(
      o.out + "/pointing_game.png", table,
      {.title = fmt::format("Pointing game: hit rate per class (tolerance {} px)", o.tolerance),
       .x_label = "map",
       .y_label = "class",
       .value_label = "hit rate",
       .row_labels = names,
       .column_labels = {"CAM", "Grad-CAM 16x16", "brightness", "random (expected)"},
       .min_value = 0.0,
       .max_value = 1.0,
       .show_values = true,
       .value_digits = 2});
  if (drawn) t.say("Wrote {}/pointing_game.png.\n", o.out);
}

void write_pairs_csv(const std::string& path, const PointingResults& p) {
  viz::CsvLog pairs(path, {"canvas", "class", "distractor", "cam", "grad_cam_8x8", "grad_cam_16x16",
                           "brightness", "centre", "random", "random_expected"});
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    std::vector<double> row = {double(p.pairs[i].canvas), double(p.pairs[i].label),
                               double(p.pairs[i].distractor)};
    row.insert(row.end(), p.hits[i].begin(), p.hits[i].end());
    row.push_back(p.random_expected[i]);
    pairs.write_values(row);
  }
}

void section_pointing(Transcript& t, const Options& o, const PointingResults& p,
                      const std::vector<std::string>& names) {
  t.heading("6. The pointing game");
  Index distractor_pairs = 0;
  for (const PointingPair& pair : p.pairs) distractor_pairs += pair.distractor;
  t.say("{} (test canvas, present class) pairs, {} of them on canvases with another class too.\n",
        p.pairs.size(), distractor_pairs);
  t.say("A hit: the map's largest pixel (bilinear upsampling to 64x64) is within {} pixels\n",
        o.tolerance);
  t.say("of a box of the class. Rates per class, then averaged over the classes (Zhang et al.).\n");
  t.say("Mass in boxes: the share of the map's sum inside the class's boxes, mean over the\n");
  t.say("pairs (a CAM is first shifted to a minimum of 0, as the figures show it).\n\n");
  t.say("{:<30} {:>10} {:>16} {:>14}\n", "map", "hit rate", "with distractor", "mass in boxes");
  for (int kind = 0; kind < kMapKinds; ++kind)
    t.say("{:<30} {:>10.3f} {:>16.3f} {:>14.3f}\n", map_kind_name(kind),
          p.all[kind].class_mean_hit_rate(), p.with_distractor[kind].class_mean_hit_rate(),
          p.all[kind].mean_mass_share());
  t.say("{:<30} {:>10.3f} {:>16.3f} {:>14.3f}\n", "random, expected (area share)",
        p.expected_all.class_mean_hit_rate(), p.expected_with_distractor.class_mean_hit_rate(),
        p.expected_all.mean_mass_share());
  t.say("(Over all pairs without the per-class mean: CAM {:.3f}, random expected {:.3f}.)\n",
        p.all[kCam].hit_rate(), p.expected_all.hit_rate());
  per_class_table(t, o, p, names);
  write_pairs_csv(o.out + "/pointing_pairs.csv", p);
  t.say("Wrote {}/pointing_pairs.csv: every pair's hits.\n", o.out);
}

// One row of maps.png: test canvas i, then CAM, Grad-CAM 8x8 and 16x16 of each class on it.
std::vector<Panel> figure_row(CamClassifier& model, const LessonData& d, Index i, Generator& gen) {
  const Index size = d.test.images.size(2);
  const NDArray image = canvas_image(d.test, i);
  const auto& objects = d.test.objects[static_cast<std::size_t>(i)];
  const std::vector<std::string> nouns = data::caption_nouns(d.class_names);
  const std::pair<int, const char*> shown[] = {
      {kCam, "CAM"}, {kGradCam8, "GC8"}, {kGradCam16, "GC16"}};
  std::vector<Panel> row = {canvas_panel(image, objects, kZoom, fmt::format("test {}", i))};
  for (const PointingPair& pair : pointing_pairs(d.test)) {
    if (pair.canvas != i) continue;
    const std::vector<NDArray> maps =
        explanation_maps(model, image.reshape({1, 3, size, size}), {pair.label}, gen);
    const std::vector<data::Box> boxes = boxes_of_class(objects, pair.label);
    for (const auto& [kind, tag] : shown) {
      const NDArray& grids = maps[static_cast<std::size_t>(kind)];  // [1, h, w]
      const NDArray grid = grids.reshape({grids.size(1), grids.size(2)});
      row.push_back(
          map_panel(image, upsample_map(grid, size), boxes, kZoom,
                    fmt::format("{} {}", tag, nouns[static_cast<std::size_t>(pair.label)])));
    }
  }
  return row;
}

void section_figures(Transcript& t, const Options& o, CamClassifier& model, const LessonData& d) {
  t.heading("7. The maps over the canvases");
  const Index count = std::min<Index>(o.figures, d.test.size());
  if (count == 0) {
    t.say("--figures 0: no figure.\n");
    return;
  }
  Generator gen(o.seed);
  std::vector<std::vector<Panel>> rows;
  for (Index i = 0; i < count; ++i) rows.push_back(figure_row(model, d, i, gen));
  write_panels(o.out + "/maps.png", rows);
  t.say("Wrote {}/maps.png: the first {} test canvases, each followed by the CAM, Grad-CAM\n",
        o.out, count);
  t.say("on the 8x8 grid (GC8) and on the 16x16 grid (GC16) of each class on it; the class's\n");
  t.say("boxes in cyan, the map's largest pixel marked with a white cross.\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lessons::CommandLine cli("08_cnn_cam",
                           "Lesson 08: a CNN learns which classes are on a canvas; its CAM and "
                           "Grad-CAM maps are scored by the pointing game against the true boxes "
                           "(docs/08_cnn_cam.md).");
  cli.add("seed", o.seed, "seed of the canvases, initial weights, batch order and random maps");
  cli.add("train", o.train, "training canvases");
  cli.add("validation", o.validation, "validation canvases, scored after every epoch");
  cli.add("test", o.test, "held-out canvases for the final scores and the pointing game");
  cli.add("epochs", o.epochs, "passes over the training canvases");
  cli.add("batch", o.batch, "canvases per training step");
  cli.add("lr", o.lr, "Adam's peak learning rate (cosine decay to a tenth of it)");
  cli.add("tolerance", o.tolerance, "pointing game: pixels the maximum may lie outside a box");
  cli.add("figures", o.figures, "test canvases drawn with their maps in maps.png");
  cli.add("standardize", o.standardize,
          "standardise the input pixels and start the class biases at the priors' log-odds");
  cli.add("synthetic", o.synthetic, "use generated pictures instead of Fashion-MNIST");
  cli.add("progress", o.progress, "show the training progress line on stderr");
  cli.add("data", o.data, "folder with the Fashion-MNIST files");
  cli.add("out", o.out, "folder for summary.txt, the CSV files and the figures");
  cli.parse(argc, argv);

  return lessons::run_lesson([&] {
    if (o.train < 1 || o.validation < 1 || o.test < 1)
      fail("--train, --validation and --test must be at least 1, got {}, {} and {}", o.train,
           o.validation, o.test);
    if (o.epochs < 1) fail("--epochs must be at least 1, got {}", o.epochs);
    if (o.batch < 1) fail("--batch must be at least 1, got {}", o.batch);
    if (!(o.lr > 0)) fail("--lr must be positive, got {}", o.lr);
    if (!(o.tolerance >= 0)) fail("--tolerance must be 0 or more pixels, got {}", o.tolerance);
    if (o.figures < 0) fail("--figures must be 0 or more, got {}", o.figures);
    const auto start = std::chrono::steady_clock::now();
    lessons::make_output_folder(o.out);
    Transcript t;
    t.say("Lesson 08: CNN features and class activation maps (seed {}, outputs in {})\n", o.seed,
          o.out);
    LessonData d = section_data(t, o);
    Generator gen(o.seed);
    CamClassifier model(EncoderShape{}, static_cast<Index>(d.class_names.size()), gen);
    section_model(t, o, model, d);
    section_training(t, o, model, d);
    section_classification(t, model, d);
    const PointingResults p =
        play_pointing_game(model, d.test, {.tolerance = o.tolerance, .seed = o.seed});
    section_identity(t, p);
    section_pointing(t, o, p, d.class_names);
    section_figures(t, o, model, d);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n", seconds, o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
