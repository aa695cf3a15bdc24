// Sections 2-4 of the program: one classifier trained with the options of the section (the
// baseline, GAIN, GAIN_ext), its epochs printed as they end, then its scores.
#include "program.h"

namespace attend::lesson14 {

GuidedOptions training_options(const Options& o) {
  return {.epochs = o.epochs,
          .batch = o.batch,
          .lr = o.lr,
          .shuffle_seed = o.seed,
          .progress = o.progress,
          .gain = {.sigma = o.sigma, .omega = o.omega},
          .all_classes = o.all_classes,
          .class_seed = o.seed};
}

void release_cached_memory() {
  memory::empty_cache();
}

std::vector<CamClassifier*> Trained::pointers() const {
  std::vector<CamClassifier*> out;
  for (const auto& m : models) out.push_back(m.get());
  return out;
}

void say_scores(app::Transcript& t, const ShortcutScores& s, const std::string& class_name) {
  t.say("Balanced accuracy of \"{}?\": aligned {:.3f}, conflicting {:.3f} (gap {:.3f}),\n",
        class_name, s.aligned, s.conflicting, s.gap());
  t.say("independent {:.3f}. Its map on aligned canvases with the item: {:.1f}% on the band,\n",
        s.independent, 100 * s.mass_on_cue);
  t.say("{:.1f}% inside the item's box.\n", 100 * s.mass_in_box);
}

Trained section_model(app::Transcript& t, const Options& o, const ShortcutData& d,
                      const std::string& name, const GuidedOptions& options) {
  Generator gen(o.seed);  // every model starts from the same weights
  auto model = std::make_shared<CamClassifier>(EncoderShape{},
                                               static_cast<Index>(d.class_names.size()), gen);
  prepare_classifier(*model, d.train.set);
  auto after_epoch = [&](const GuidedRecord& r) {
    t.say("epoch {}: L_cl {:.4f}", r.epoch, r.classification);
    if (options.mining_weight != 0) t.say(", L_am {:.4f}", r.mining);
    if (options.extra_weight != 0) t.say(", L_e {:.4f}", r.extra);
    t.say(", validation mAP {:.3f} ({:.0f} s)\n", r.validation_map, r.seconds);
  };
  train_guided(*model, d.train, d.boxed, d.validation, options, after_epoch);
  release_cached_memory();
  Trained trained{
      .name = name, .models = {model}, .outputs = {test_outputs(*model, d)}, .scores = {}};
  trained.scores = score_outputs({&trained.outputs.front()}, d);
  say_scores(t, trained.scores, d.class_names[static_cast<std::size_t>(d.cue_class)]);
  return trained;
}

}  // namespace attend::lesson14
