// Section 5 of the program: adversarial erasing (erasing.cpp). Step 1 is the baseline's
// classifier; each further step erases what the previous one attended on the training
// canvases (erasures add up) and trains a fresh classifier on them. The steps together are
// scored as one model: their mean logits, and the union of their maps (from the outputs each
// step's scoring kept: no classifier runs on the test sets twice).
#include "program.h"

namespace attend::lesson14 {

Trained section_erasing(app::Transcript& t, const Options& o, ShortcutData& d,
                        const Trained& baseline) {
  t.heading("5. Adversarial erasing: erase what was seen, train again");
  const std::vector<double> fill = mean_pixel(d.train.set.images);
  t.say("Erased pixels take the training canvases' mean pixel ({:.3f}, {:.3f}, {:.3f}); a pixel\n",
        fill[0], fill[1], fill[2]);
  t.say("is erased where a scaled class map of a class on the canvas reaches {}.\n",
        o.erase_threshold);
  Trained erasing{.name = "erasing",
                  .models = {baseline.models.front()},
                  .outputs = {baseline.outputs.front()},
                  .scores = {}};
  const std::string class_name = d.class_names[static_cast<std::size_t>(d.cue_class)];
  CueSet& erased = d.train;  // erased in place, step after step
  for (int step = 2; step <= o.erase_steps; ++step) {
    const double share = erase_attended(*erasing.models.back(), erased, o.erase_threshold, fill);
    release_cached_memory();
    t.say("\nStep {}: the classifier of step {} attends {:.1f}% of the pixels of its training\n",
          step, step - 1, 100 * share);
    t.say("canvases; they are erased, and a fresh classifier trains on what is left.\n");
    Generator gen(o.seed);
    auto model = std::make_shared<CamClassifier>(EncoderShape{},
                                                 static_cast<Index>(d.class_names.size()), gen);
    prepare_classifier(*model, erased.set);
    train_guided(*model, erased, d.boxed, d.validation, training_options(o));
    release_cached_memory();
    erasing.outputs.push_back(test_outputs(*model, d));
    const ShortcutScores alone = score_outputs({&erasing.outputs.back()}, d);
    t.say(
        "On its own: aligned {:.3f}, conflicting {:.3f}; map {:.1f}% on the band, {:.1f}% in "
        "the box.\n",
        alone.aligned, alone.conflicting, 100 * alone.mass_on_cue, 100 * alone.mass_in_box);
    erasing.models.push_back(model);
  }
  std::vector<const TestOutputs*> outputs;  // every step's, computed as it was scored
  for (const TestOutputs& o : erasing.outputs) outputs.push_back(&o);
  erasing.scores = score_outputs(outputs, d);
  t.say("\nThe {} classifiers together (mean logits, union of the maps):\n", erasing.models.size());
  say_scores(t, erasing.scores, class_name);
  return erasing;
}

}  // namespace attend::lesson14
