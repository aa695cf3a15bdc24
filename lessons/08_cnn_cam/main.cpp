// Lesson 08: CNN features and class activation maps. Run it and read docs/08_cnn_cam.md next
// to it:
//
//   ./build/bin/08_cnn_cam                # Fashion-MNIST canvases, seed 0, output/08_cnn_cam
//   ./build/bin/08_cnn_cam --synthetic    # the generated stand-in, no data files needed
//   ./build/bin/08_cnn_cam --help         # the flags
//
// The sections follow the chapter: the canvases, the CNN and its 8x8 grid of region features,
// multi-label training, held-out accuracy, CAM and Grad-CAM, the pointing game, the figures.
#include <algorithm>
#include <chrono>

#include "attend.h"
#include "program.h"

using namespace attend;
using namespace attend::lesson08;
using attend::app::Transcript;

namespace {

// How many test canvases section 2 measures the initial features on.
constexpr Index kFeatureProbe = 32;

// The mean of the encoder's features on a few test canvases: how large they start.
double mean_feature(CamClassifier& model, const CanvasSet& set) {
  NoGradGuard no_graph;
  const Tensor images(slice(set.images, 0, 0, std::min(kFeatureProbe, set.size())));
  return mean(model.encoder(images).data()).item();
}

void section_model(Transcript& t, const Options& o, CamClassifier& model, const CanvasData& d) {
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
  initialise_class_priors(model.classifier, d.train);
  t.say("The training pixels have mean {:.4f} and standard deviation {:.4f} (mostly black).\n",
        s.mean, s.std);
  t.say("Standardising them, (x - mean) / std, raises the mean feature at initialisation\n");
  t.say("from {:.4f} to {:.4f}. The class biases start at the log-odds of the class\n", raw,
        mean_feature(model, d.test));
  t.say("frequencies, e.g. {:.3f} for {}.\n", model.classifier.bias.data().at({0}),
        d.class_names[0]);
}

void section_training(Transcript& t, const Options& o, CamClassifier& model, const CanvasData& d) {
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

// Saves the trained CNN under a name that says how it was trained, for lesson 13, which
// reads the same CNN on the same canvases instead of training it again. A failed save costs
// lesson 13 its shortcut, not this run: a warning, and the run goes on.
void save_model(Transcript& t, const Options& o, const CamClassifier& model) {
  const std::string file = vision::trained_classifier_file(
      o.out, "cnn", canvas_options(o),
      {.epochs = o.epochs, .batch = o.batch, .lr = o.lr, .shuffle_seed = o.seed}, o.standardize);
  try {
    nn::save_checkpoint(file, model);
    t.say("Saved the trained CNN to {} (lesson 13 reads it).\n", file);
  } catch (const Error& e) {
    fmt::print(stderr, "warning: cannot save the trained CNN ({}); going on\n", e.what());
  }
}

void section_classification(Transcript& t, CamClassifier& model, const CanvasData& d) {
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

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "08_cnn_cam",
          "Lesson 08: a CNN learns which classes are on a canvas; its CAM and Grad-CAM maps are "
          "scored by the pointing game against the true boxes (docs/08_cnn_cam.md).");
  return app::run_program([&] {
    const auto start = std::chrono::steady_clock::now();
    app::make_output_folder(o.out);
    Transcript t;
    t.say("Lesson 08: CNN features and class activation maps (seed {}, outputs in {})\n", o.seed,
          o.out);
    CanvasData d = section_data(t, o);
    Generator gen(o.seed);
    CamClassifier model(EncoderShape{}, static_cast<Index>(d.class_names.size()), gen);
    section_model(t, o, model, d);
    memory::empty_cache();  // section 2's batches of 32 canvases: training uses other sizes
    section_training(t, o, model, d);
    save_model(t, o, model);
    d.train = {};           // the training canvases (200 MB) are not read again:
    memory::empty_cache();  // their memory goes back to the system
    section_classification(t, model, d);
    const PointingResults p =
        play_pointing_game(model, d.test, {.tolerance = o.tolerance, .seed = o.seed});
    section_identity(t, p);
    section_pointing(t, o, p, d.class_names);
    section_figures(t, o, model, d);
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
