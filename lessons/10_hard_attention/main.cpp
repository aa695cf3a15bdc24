// Lesson 10: stochastic hard attention (one sampled region per word) against soft attention,
// trained with REINFORCE (the score-function term at lambda_r = 0.05, its centred reward
// variance-normalised) and its estimator measured (docs/10_hard_attention.md). Run it and
// read the chapter:
//
//   ./build/bin/10_hard_attention              # seed 0, into output/10_hard_attention
//   ./build/bin/10_hard_attention --help       # the flags
//
// The sections follow the chapter: the same canvases and frozen encoder as lesson 09 (the
// library's, seq/captioning/), soft and hard decoders trained on several seeds, then the
// soft-versus-hard table, measured. lesson.h lists the flags; report.cpp and figures.cpp
// print and draw the sections.
#include <chrono>

#include "lesson.h"

using namespace attend;
using namespace attend::lesson10;

namespace {

constexpr const char* kDescription =
    "Lesson 10: stochastic hard attention (one sampled region per word) against soft attention, "
    "trained with REINFORCE and its estimator measured (docs/10_hard_attention.md).";

// Section 1: the canvases and the frozen encoder, lesson 09's if its cache has it.
PreparedCanvases prepare(app::Transcript& t, const Options& o, RegionEncoder& encoder) {
  t.heading("1. The canvases and the frozen encoder (as in lesson 09)");
  PreparedCanvases d = prepare_canvases(o.pipeline(), encoder);
  t.say(
      "{} training / {} test canvases ({}); the encoder names the nouns of {:.1f}% of the\n"
      "test canvases' objects ({:.1f}% of held-out single items). {:.0f} s.\n",
      o.train, o.test, o.synthetic ? "generated patterns" : "Fashion-MNIST",
      100 * d.encoder_canvas_accuracy.noun, 100 * d.encoder_accuracy.noun, d.seconds);
  t.say("{}\n",
        d.encoder_loaded_from.empty()
            ? "The encoder was pre-trained here (lesson 09 had not saved one with these "
              "settings)."
            : fmt::format("The encoder is lesson 09's, loaded from {}.", d.encoder_loaded_from));
  return d;
}

int run(const Options& o) {
  if (o.train < o.batch) fail("--train must be at least --batch ({}), got {}", o.batch, o.train);
  app::make_output_folder(o.out);
  const auto start = std::chrono::steady_clock::now();
  app::Transcript t;
  t.say(
      "Lesson 10: hard attention (seed {}, {} seeds per model, {} epochs, semi-sampling {},\n"
      "tau {}, lambda_r {}{}, lambda_e {}, outputs in {})\n",
      o.seed, o.seeds, o.epochs, o.semi_sampling, o.temperature, o.reinforce_weight,
      o.normalise_advantage ? " (variance-normalised)" : "", o.entropy_weight, o.out);
  Generator gen(o.seed);
  RegionEncoder encoder(kEncoderChannels, kRegionFeatures, encoder_labels(), gen);
  PreparedCanvases d = prepare(t, o, encoder);

  t.heading("2. Training: soft attention (lesson 09) and hard attention (sampled regions)");
  if (num_threads() > 1 && o.seeds > 1)
    t.say("The seeds of a model train two at a time, side by side on two threads.\n");
  Trained soft = train_model(t, o, d, /*soft=*/true);
  Trained hard = train_model(t, o, d, /*soft=*/false);
  plot_curves(o, soft, hard);
  t.say(
      "Training took {:.0f} s (soft, {} seeds) and {:.0f} s (hard, {} seeds); curves in\n"
      "{}/training.png.\n",
      soft.seconds, o.seeds, hard.seconds, o.seeds, o.out);

  t.heading("3. Measuring the differences");
  t.say(
      "Greedy captions of the {} test canvases (the hard model reads its most attended\n"
      "region), {} gradient estimates of f_att at the trained weights, and the time per word.\n",
      d.splits.test.size(), o.draws);
  soft_versus_hard(t, o, measure(o, d, soft, hard));

  t.heading("5. The figures");
  write_strips(t, o, *hard.decoder, d);
  write_viewer_data(t, o, *soft.decoder, *hard.decoder, d);
  t.say(
      "\nWhole run: {:.0f} s. Wrote {}/summary.txt, soft_seed*.csv, hard_seed*.csv,\n"
      "training.png and strips/.\n",
      app::seconds_since(start), o.out);
  t.save(o.out + "/summary.txt");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "10_hard_attention", kDescription);
  return app::run_program([&] { return run(o); });
}
