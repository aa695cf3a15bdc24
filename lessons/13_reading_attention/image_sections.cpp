// The image half of lesson 13 as the program prints and draws it: the canvases, the two
// classifiers, every map scored, the figure, the sanity checks.
#include <chrono>
#include <filesystem>
#include <fstream>

#include "images.h"

namespace attend::lesson13 {
namespace {

// Lesson 08's batch size (its --batch), with which its CNN was trained.
constexpr Index kCnnBatch = 16;

void print_report(app::Transcript& t, const std::string& name, Index parameters,
                  const vision::ClassificationReport& r) {
  t.say("{:<18} {:>10} {:>8.3f} {:>9.3f} {:>12.1f}%\n", name, parameters, r.mean_average_precision,
        r.macro_f1, 100 * r.exact_match);
}

// Trains one classifier with the progress line and a one-line summary per epoch.
double train(app::Transcript& t, nn::UnaryModule& model, const vision::CanvasData& d,
             const vision::TrainOptions& options, const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  vision::train_classifier(model, d.train, d.validation, options,
                           [&](const vision::EpochRecord& r) {
                             t.say("{} epoch {}: training loss {:.4f}, validation mAP {:.3f}", name,
                                   r.epoch, r.train_loss, r.validation_map);
                             t.say(" ({:.0f} s)\n", r.seconds);
                           });
  return app::seconds_since(start);
}

// Lesson 08's CNN: read from lesson 08's folder when lesson 08 trained it on these canvases
// with these settings (the file's name says how: vision::trained_classifier_file), else trained
// here exactly as lesson 08 trains it. Returns the seconds spent training (0 when read).
double lesson08_cnn(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                    vision::CamClassifier& cnn) {
  const vision::TrainOptions recipe{.epochs = o.cnn_epochs,
                                    .batch = kCnnBatch,
                                    .lr = o.cnn_lr,
                                    .shuffle_seed = o.seed,
                                    .progress = o.progress};
  if (o.cnn_from != "none") {
    const std::string file =
        vision::trained_classifier_file(o.cnn_from, "cnn", canvas_data_options(o), recipe, true);
    if (std::filesystem::exists(file)) {
      try {
        nn::load_checkpoint(file, cnn);
        t.say("CNN: lesson 08's trained model, read from {}.\n", file);
        return 0;
      } catch (const Error& e) {  // damaged, or another model's: train it here
        fmt::print(stderr, "note: cannot read lesson 08's CNN ({}); training it here\n", e.what());
      }
    } else {
      t.say("CNN: no model of lesson 08 trained on these canvases at {}:\n", file);
      t.say(
          "trained here as lesson 08 trains it (run ./build/bin/08_cnn_cam first to skip this).\n");
    }
  }
  return train(t, cnn, d, recipe, "CNN");
}

vision::ClassificationReport test_report(nn::UnaryModule& model, const vision::CanvasSet& test) {
  model.eval();
  return vision::evaluate_classifier(vision::predict_logits(model, test.images), test.labels);
}

void write_scores_csv(const std::string& path, const ImageScores& s) {
  std::ofstream csv(path);
  csv << "method,pairs,hit_rate,class_mean_hit_rate,mass_in_boxes,curve_pairs,deletion_auc,"
         "insertion_auc\n";
  for (std::size_t row = 0; row < s.methods.size(); ++row) {
    const MethodScore& m = s.methods[row];
    csv << viz::csv_cell(method_name(static_cast<Index>(row))) << ',' << m.pairs << ','
        << m.pointing.hit_rate() << ',' << m.pointing.class_mean_hit_rate() << ','
        << m.pointing.mean_mass_share() << ',' << m.curves << ',' << m.deletion << ','
        << m.insertion << '\n';
  }
  if (!csv) fail("cannot write '{}'", path);
}

// The mean deletion or insertion curve of every method but the single heads.
bool plot_mean_curves(const std::string& png, const ImageScores& s, bool deletion) {
  std::vector<viz::Series> series;
  for (Index row = 0; row < kMethods; ++row) {
    const MethodScore& m = s.methods[static_cast<std::size_t>(row)];
    const std::vector<double>& curve = deletion ? m.deletion_curve : m.insertion_curve;
    viz::Series line{method_name(row)};
    for (std::size_t i = 0; i < curve.size(); ++i)
      line.add(static_cast<double>(i) / static_cast<double>(curve.size() - 1), curve[i]);
    series.push_back(line);
  }
  return viz::plot_curves(
      png, series,
      {.title = deletion ? "Deletion: the most relevant patches removed first (lower is better)"
                         : "Insertion: the most relevant patches added first (higher is better)",
       .x_label = deletion ? "share of patches removed" : "share of patches present",
       .y_label = "probability of the class (mean over pairs)",
       .y2_label = {},
       .log_y = false,
       .y_min = 0,
       .y_max = 1});
}

}  // namespace

vision::CanvasDataOptions canvas_data_options(const Options& o) {
  return {.train = o.canvas_train,
          .validation = o.canvas_validation,
          .test = o.canvas_test,
          .seed = o.seed,
          .synthetic = o.synthetic,
          .folder = o.data,
          .canvas_size = kCanvasSize};
}

vision::CanvasData section_canvases(app::Transcript& t, const Options& o) {
  t.heading("Images 1. The canvases: which items are on them, and where");
  vision::CanvasData d = vision::make_canvas_data(canvas_data_options(o));
  t.say("{} training, {} validation and {} test canvases of 64x64 pixels with 1 to 3 {}\n",
        d.train.size(), d.validation.size(), d.test.size(),
        o.synthetic ? "synthetic items" : "Fashion-MNIST items");
  t.say("each, as in lesson 08. Test canvases with each class:\n");
  const std::vector<Index> counts = vision::class_counts(d.test);
  for (std::size_t c = 0; c < counts.size(); ++c)
    t.say("  {:<14} {:>4}{}", d.class_names[c], counts[c], c % 4 == 3 ? "\n" : "");
  t.say("\n");
  return d;
}

void section_classifiers(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                         vision::CamClassifier& cnn, CanvasVit& vit) {
  t.heading("Images 2. Two classifiers on the same canvases: lesson 08's CNN and a ViT");
  t.say("{}: {} parameters\n", vit.vit.describe(), vit.parameter_count());
  t.say("  conv_proj.weight {} (the patch embedding E), class_token {}, pos_embedding {},\n",
        vit.vit.conv_proj.weight.shape(), vit.vit.class_token.shape(),
        vit.vit.pos_embedding.shape());
  t.say("  then {} pre-norm encoder layers, the final LayerNorm ln and heads {}.\n",
        vit.vit.layers.size(), vit.vit.heads.weight.shape());
  t.say("A 64x64 canvas in {}x{} patches: {} patch tokens and the class token, {} layers of\n",
        o.vit_patch, o.vit_patch, vit.vit.num_patches(), o.vit_layers);
  t.say("{} heads, D = {}. Both models read standardised pixels and start their biases at the\n",
        o.vit_heads, o.vit_dim);
  t.say("classes' log-odds; both train with Adam, a cosine decay and binary cross-entropy.\n\n");
  cnn.encoder.set_input_statistics(vit.pixels.mean, vit.pixels.std);
  vision::initialise_class_priors(cnn.classifier, d.train);
  vision::initialise_class_priors(vit.vit.heads, d.train);
  const double cnn_seconds = lesson08_cnn(t, o, d, cnn);
  const double vit_seconds = train(t, vit, d,
                                   {.epochs = o.vit_epochs,
                                    .batch = o.vit_batch,
                                    .lr = o.vit_lr,
                                    .shuffle_seed = o.seed,
                                    .progress = o.progress},
                                   "ViT");
  t.say("\n{:<18} {:>10} {:>8} {:>9} {:>13}\n", "test canvases", "parameters", "mAP", "macro F1",
        "exact match");
  print_report(t, "CNN (lesson 08)", cnn.parameter_count(), test_report(cnn, d.test));
  print_report(t, "ViT", vit.parameter_count(), test_report(vit, d.test));
  if (cnn_seconds > 0)
    t.say("Training took {:.0f} s for the CNN, {:.0f} s for the ViT.\n", cnn_seconds, vit_seconds);
  else
    t.say("Training took {:.0f} s for the ViT (the CNN was read).\n", vit_seconds);
}

void section_map_scores(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                        vision::CamClassifier& cnn, CanvasVit& vit) {
  t.heading("Images 3. Which map tells the truth? Every method on the test canvases");
  const auto start = std::chrono::steady_clock::now();
  const ImageScores s = score_methods(vit, cnn, d.test,
                                      {.tolerance = o.tolerance,
                                       .flow_canvases = o.flow_canvases,
                                       .curve_pairs = o.curve_pairs,
                                       .curve_steps = o.curve_steps,
                                       .seed = o.seed});
  t.say("{} (test canvas, class present) pairs. Hit: the map's largest pixel within {} pixels\n",
        s.pairs.size(), o.tolerance);
  t.say("of a box of the class (rate per class, then the mean over classes). Mass: the share\n");
  t.say("of the map inside the class's boxes. Deletion / insertion: area under the class\n");
  t.say("probability as 8x8 patches are set to the mean pixel ({:.3f}) / restored, most\n", s.fill);
  t.say("relevant first, in {} steps, on the first {} pairs. CNN rows: the CNN's own maps\n",
        o.curve_steps, std::min<Index>(o.curve_pairs, static_cast<Index>(s.pairs.size())));
  t.say("and probability; every other row is scored with the ViT's probability.\n\n");
  t.say("{:<30} {:>6} {:>9} {:>7} {:>10} {:>10}\n", "method", "pairs", "hit rate", "mass",
        "deletion", "insertion");
  for (std::size_t row = 0; row < s.methods.size(); ++row) {
    const MethodScore& m = s.methods[row];
    t.say("{:<30} {:>6} {:>9.3f} {:>7.3f} {:>10.3f} {:>10.3f}\n",
          method_name(static_cast<Index>(row)), m.pairs, m.pointing.class_mean_hit_rate(),
          m.pointing.mean_mass_share(), m.deletion, m.insertion);
  }
  t.say("{:<30} {:>6} {:>9.3f} {:>7.3f}\n", "random point, expected", s.pairs.size(),
        s.random_expected.class_mean_hit_rate(), s.random_expected.mean_mass_share());
  t.say("(deletion: lower is better; insertion: higher is better. {:.0f} s.)\n",
        app::seconds_since(start));
  write_scores_csv(o.out + "/image_scores.csv", s);
  t.say("Wrote {}/image_scores.csv.\n", o.out);
  if (o.curve_pairs == 0) return;  // --curve-pairs 0: no curves to draw
  t.say_plot_files(plot_mean_curves(o.out + "/deletion.png", s, true), o.out + "/deletion");
  t.say_plot_files(plot_mean_curves(o.out + "/insertion.png", s, false), o.out + "/insertion");
}

void section_method_figure(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                           vision::CamClassifier& cnn, CanvasVit& vit) {
  if (o.image_figures == 0) return;
  t.heading("Images 4. Every method's map of the same canvases");
  viz::AttentionRun run{
      .lesson = "13_reading_attention",
      .title =
          "every method's map of the first test canvases, with its "
          "pointing game hit and mass in the class's boxes",
      .kind = "image",
      .seed = o.seed,
      .flags = fmt::format("--image-figures {} --tolerance {}", o.image_figures, o.tolerance)};
  run.examples = write_method_figure(o.out + "/image_maps.png", vit, cnn, d.test, d.class_names,
                                     o.image_figures, o.seed, o.tolerance);
  t.say("Wrote {}/image_maps.png: one row per method, one column per test canvas; the\n", o.out);
  t.say("class's boxes in cyan, a cross at each map's largest pixel.\n");
  if (run.examples.empty()) return;
  const std::filesystem::path page = viz::write_attention_run(o.out, run, "images");
  t.say("Wrote {}/images/attention.json (these maps and their scores); to explore it, open {}.\n",
        o.out, page.string());
}

}  // namespace attend::lesson13
