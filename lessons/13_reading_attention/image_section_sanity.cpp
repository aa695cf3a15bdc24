// Section 5 of the image half: the sanity checks printed (one table per similarity, the
// verdict per method), plotted (image_sanity.png) and written (image_sanity.csv).
#include <chrono>
#include <fstream>

#include "images.h"

namespace attend::lesson13 {
namespace {

// A method whose maps keep a rank correlation of at least this with the trained model's has
// "barely changed": most of their order survived (the chapter discusses the choice).
constexpr double kUnchanged = 0.5;

// The rows the sanity checks compare: every method but the CNN's.
std::vector<Index> sanity_rows(Index heads) {
  std::vector<Index> rows;
  for (Index row = 0; row < method_count(heads); ++row)
    if (!uses_cnn(row)) rows.push_back(row);
  return rows;
}

void print_table(app::Transcript& t, const SanityCurves& c, const std::vector<Index>& rows,
                 bool absolute) {
  t.say("\nSpearman rho {} the trained model's maps, after randomising down to:\n",
        absolute ? "of |map| with" : "(signed) with");
  t.say("{:<30}", "method");
  for (const std::string& step : c.steps) t.say(" {:>6}", step);
  t.say("\n");
  for (Index row : rows) {
    t.say("{:<30}", method_name(row));
    for (std::size_t s = 0; s < c.steps.size(); ++s) {
      const auto& rho = absolute ? c.rho_abs[s] : c.rho_signed[s];
      t.say(" {:>6.2f}", rho[static_cast<std::size_t>(row)]);
    }
    t.say("\n");
  }
}

// The first step after which |rho| falls below kUnchanged, per method.
void print_verdicts(app::Transcript& t, const SanityCurves& c, const std::vector<Index>& rows) {
  t.say("\nThe first part whose randomisation changes the maps (|rho| below {}):\n", kUnchanged);
  for (Index row : rows) {
    std::string first = "never: fails the check";
    if (c.rho_abs[0][static_cast<std::size_t>(row)] < kUnchanged)
      first = "none: not even the same model's maps agree";
    else
      for (std::size_t s = 1; s < c.steps.size(); ++s)
        if (c.rho_abs[s][static_cast<std::size_t>(row)] < kUnchanged) {
          first = s == 1 ? c.steps[s] + " (the first step)" : c.steps[s];
          break;
        }
    t.say("  {:<30} {}\n", method_name(row), first);
  }
}

bool plot_sanity(const std::string& png, const SanityCurves& c, Index heads) {
  std::vector<viz::Series> series;
  for (Index row : sanity_rows(heads)) {
    if (row >= kMethods) continue;  // the heads: in the CSV
    viz::Series line{method_name(row)};
    for (std::size_t s = 0; s < c.steps.size(); ++s)
      line.add(static_cast<double>(s), c.rho_abs[s][static_cast<std::size_t>(row)]);
    series.push_back(line);
  }
  std::string order;
  for (std::size_t s = 1; s < c.steps.size(); ++s) order += (s > 1 ? ", " : "") + c.steps[s];
  return viz::plot_curves(png, series,
                          {.title = "Cascading randomisation: " + order,
                           .x_label = "parts randomised, from the top",
                           .y_label = "Spearman rho of |map| with the trained model's",
                           .y2_label = {},
                           .log_y = false,
                           .y_min = -0.3,
                           .y_max = 1.05});
}

void write_sanity_csv(const std::string& path, const std::vector<SanityCurves>& all, Index heads) {
  std::ofstream csv(path);
  csv << "step,method,rho_abs,rho_signed\n";
  for (const SanityCurves& c : all)
    for (std::size_t s = 0; s < c.steps.size(); ++s)
      for (Index row : sanity_rows(heads))
        csv << viz::csv_cell(c.steps[s]) << ',' << viz::csv_cell(method_name(row)) << ','
            << c.rho_abs[s][static_cast<std::size_t>(row)] << ','
            << c.rho_signed[s][static_cast<std::size_t>(row)] << '\n';
  if (!csv) fail("cannot write '{}'", path);
}

// The data randomisation test: the same ViT trained on shuffled labels.
SanityCurves shuffled_labels(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                             CanvasVit& vit) {
  Generator gen(o.seed);  // the trained ViT's initialisation: only the labels differ
  CanvasVit shuffled(vit.vit.config(), vit.pixels, gen);
  // The training canvases, freed after section 2, made again: the same ones, from the seed.
  vision::CanvasSet train =
      with_shuffled_labels(vision::make_training_canvases(canvas_data_options(o)), o.seed);
  vision::initialise_class_priors(shuffled.vit.heads, train);
  const auto start = std::chrono::steady_clock::now();
  vision::train_classifier(shuffled, train, d.validation,
                           {.epochs = o.shuffled_epochs,
                            .batch = o.vit_batch,
                            .lr = o.vit_lr,
                            .shuffle_seed = o.seed,
                            .progress = o.progress});
  train = vision::CanvasSet();  // 197 MB, not needed by the maps compared below
  memory::empty_cache();        // nor are the training steps' cached blocks
  shuffled.eval();
  const auto report =
      vision::evaluate_classifier(vision::predict_logits(shuffled, d.test.images), d.test.labels);
  double prevalence = 0;  // the mean share of test canvases with a class: random scores' mAP
  for (Index count : vision::class_counts(d.test))
    prevalence += static_cast<double>(count) / static_cast<double>(d.test.size());
  prevalence /= static_cast<double>(d.class_names.size());
  t.say("\nData randomisation: the same ViT (the same initial weights) trained for {} epochs on\n",
        o.shuffled_epochs);
  t.say("the training labels shuffled across the canvases ({:.0f} s): test mAP {:.3f}, against\n",
        app::seconds_since(start), report.mean_average_precision);
  t.say("about {:.3f} for random scores. Its maps against the trained model's:\n", prevalence);
  return compare_models(vit, shuffled, d.test, {.pairs = o.sanity_pairs, .seed = o.seed});
}

}  // namespace

void section_sanity(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                    CanvasVit& vit) {
  t.heading("Images 5. Sanity checks: does a map change when the model does?");
  const auto start = std::chrono::steady_clock::now();
  const SanityCurves cascade =
      cascading_randomisation(vit, d.test, {.pairs = o.sanity_pairs, .seed = o.seed});
  t.say("Cascading randomisation (Adebayo et al. 2018) on the first {} test pairs: the parts\n",
        o.sanity_pairs);
  t.say("re-initialised from the top with a fresh model's values, cumulatively:");
  const std::vector<CascadeStep> steps = cascade_steps(vit);
  for (const CascadeStep& step : steps) t.say("\n  {:<6} {}", step.column, step.name);
  t.say("\n({:.0f} s.)", app::seconds_since(start));
  const Index heads = vit.vit.config().num_heads;
  const std::vector<Index> rows = sanity_rows(heads);
  print_table(t, cascade, rows, true);
  print_table(t, cascade, rows, false);
  print_verdicts(t, cascade, rows);
  t.say_plot_files(plot_sanity(o.out + "/image_sanity.png", cascade, heads),
                   o.out + "/image_sanity");

  memory::empty_cache();  // the randomised models' arrays: sizes that do not come again
  const SanityCurves shuffled = shuffled_labels(t, o, d, vit);
  t.say("{:<30} {:>8} {:>8}\n", "method", "|rho|", "rho");
  for (Index row : rows)
    t.say("{:<30} {:>8.2f} {:>8.2f}\n", method_name(row),
          shuffled.rho_abs[0][static_cast<std::size_t>(row)],
          shuffled.rho_signed[0][static_cast<std::size_t>(row)]);
  write_sanity_csv(o.out + "/image_sanity.csv", {cascade, shuffled}, heads);
  t.say("Wrote {}/image_sanity.csv.\n", o.out);
}

}  // namespace attend::lesson13
