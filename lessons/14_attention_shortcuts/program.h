// Lesson 14's program: its flags, and the sections main.cpp runs that have files of their own
// (section_models.cpp: training and scoring each model; section_erasing.cpp; section_regions.cpp:
// the grid against object regions).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attend.h"
#include "lesson.h"

namespace attend::lesson14 {

// Every hyper-parameter, each with the flag that changes it.
struct Options : app::Flags {
  std::uint64_t seed =
      flag(seed, "seed", 0, "seed of the canvases, the boxed share, initial weights, batch order");
  Index train =
      flag(train, "train", DataOptions{}.train, "training canvases", app::at_least<Index>(1));
  Index validation = flag(validation, "validation", DataOptions{}.validation,
                          "validation canvases (with the training cue)", app::at_least<Index>(1));
  Index test = flag(test, "test", DataOptions{}.test,
                    "canvases in each test set (aligned, conflicting, independent)",
                    app::at_least<Index>(2));
  int epochs = flag(epochs, "epochs", GuidedOptions{}.epochs, "passes over the training canvases",
                    app::at_least(1));
  Index batch = flag(batch, "batch", GuidedOptions{}.batch, "canvases per training step",
                     app::at_least<Index>(1));
  double lr = flag(lr, "lr", GuidedOptions{}.lr,
                   "Adam's peak learning rate (cosine decay to a tenth of it)", app::above(0.0));
  Index cue_class =
      flag(cue_class, "cue-class", DataOptions{}.cue.label,
           "the class the band goes with (0, 1, 5, 8 or 9)", app::between<Index>(0, 9));
  double p_with = flag(p_with, "p-with", DataOptions{}.cue.p_with,
                       "training: P(band | the class is on the canvas)", app::between(0.0, 1.0));
  double p_without = flag(p_without, "p-without", DataOptions{}.cue.p_without,
                          "training: P(band | it is not)", app::between(0.0, 1.0));
  Index band = flag(band, "band", DataOptions{}.cue.thickness, "the band's width in pixels",
                    app::between<Index>(1, 12));
  double alpha =
      flag(alpha, "alpha", 1.0, "GAIN: the weight of the mining loss L_am", app::at_least(0.0));
  double sigma = flag(sigma, "sigma", interpret::GainOptions{}.sigma,
                      "GAIN: the soft mask's threshold on the scaled map", app::between(0.0, 1.0));
  double omega = flag(omega, "omega", interpret::GainOptions{}.omega,
                      "GAIN: the soft mask's steepness", app::above(0.0));
  double extra_weight = flag(extra_weight, "extra-weight", 10.0,
                             "GAIN_ext: the weight of the box loss L_e", app::at_least(0.0));
  double box_share =
      flag(box_share, "box-share", DataOptions{}.box_share,
           "GAIN_ext: the share of training canvases whose boxes it sees", app::between(0.0, 1.0));
  bool all_classes =
      flag(all_classes, "all-classes", GuidedOptions{}.all_classes,
           "GAIN: mine every class of a canvas at each step, not one drawn at random");
  int erase_steps = flag(erase_steps, "erase-steps", ErasingOptions{}.steps,
                         "adversarial erasing: classifiers trained in turn", app::between(1, 6));
  double erase_threshold =
      flag(erase_threshold, "erase-threshold", ErasingOptions{}.threshold,
           "adversarial erasing: erase where a scaled map reaches this", app::between(0.0, 1.0));
  int figures =
      flag(figures, "figures", 3, "conflicting test canvases of each kind drawn in overlays.png",
           app::at_least(0));
  std::string part = flag(part, "part", "all",
                          "what to run: the shortcut and its fixes (sections 1-6), the grid "
                          "against object regions (section 7), or all",
                          app::one_of({"shortcuts", "regions", "all"}));
  Index region_train =
      flag(region_train, "region-train", 4000, "section 7: training canvases of the captioners",
           app::at_least<Index>(1));
  Index region_validation = flag(region_validation, "region-validation", 100,
                                 "section 7: validation canvases", app::at_least<Index>(1));
  Index region_test =
      flag(region_test, "region-test", 500, "section 7: test canvases", app::at_least<Index>(1));
  int region_epochs = flag(region_epochs, "region-epochs", 6,
                           "section 7: epochs of each captioner's training", app::at_least(1));
  Index region_batch = flag(region_batch, "region-batch", 16,
                            "section 7: captions per training step", app::at_least<Index>(1));
  Index region_encoder_steps =
      flag(region_encoder_steps, "region-encoder-steps", 1500,
           "section 7: pre-training steps of the encoder when lesson 09's is not cached",
           app::at_least<Index>(1));
  std::string encoder_cache =
      flag(encoder_cache, "encoder-cache", "output/encoders",
           "section 7: the folder where lesson 09 caches its encoder (\"\": pre-train here)");
  bool synthetic =
      flag(synthetic, "synthetic", false, "use generated pictures instead of Fashion-MNIST");
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
  std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
  std::string out = flag(out, "out", "output/14_attention_shortcuts",
                         "folder for summary.txt, results.csv, overlays.png, regions.csv and "
                         "regions.png");
};

// Figures magnify the 64-pixel canvases this many times.
constexpr Index kZoom = 2;

// The training options of every model, from the flags (mining and extra weights at 0).
GuidedOptions training_options(const Options& o);

// One trained model and its scores, as the table lists it.
struct Trained {
  std::string name;
  std::vector<std::shared_ptr<CamClassifier>> models;  // several for adversarial erasing
  std::vector<TestOutputs> outputs;                    // each model's, as scored
  ShortcutScores scores;
  std::vector<CamClassifier*> pointers() const;
};

// Between sections: the allocator keeps every freed block for a later request of its size
// (tensor/allocator.h), but the next section asks for other sizes (another batch shape, whole
// test sets, a copy of the training canvases), so the blocks of one section would only add
// to the next one's memory. This gives them back to the system.
void release_cached_memory();

// Section 1 (main.cpp): the canvases and the cue.
ShortcutData section_data(app::Transcript& t, const Options& o);
// Sections 2-4 (section_models.cpp): a fresh classifier trained with `options`, its epochs
// printed, then its scores.
Trained section_model(app::Transcript& t, const Options& o, const ShortcutData& d,
                      const std::string& name, const GuidedOptions& options);
// The scores of a model as two lines of the transcript.
void say_scores(app::Transcript& t, const ShortcutScores& s, const std::string& class_name);
// Section 5 (section_erasing.cpp): adversarial erasing; the baseline's classifier, trained on
// the plain canvases, is its step 1. It erases d.train's canvases in place: it is the last
// section that trains, and a copy would double the largest array of the program.
Trained section_erasing(app::Transcript& t, const Options& o, ShortcutData& d,
                        const Trained& baseline);
// Section 7 (section_regions.cpp): lesson 09's captioner over the grid and over object regions,
// trained on the same canvases with the same recipe; exact match, attention at the nouns, time
// per caption, and regions.png.
void section_regions(app::Transcript& t, const Options& o);

}  // namespace attend::lesson14
