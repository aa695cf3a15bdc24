// Lesson 09: Show, Attend and Tell with soft attention. Run it and read
// docs/09_show_attend_tell.md next to it:
//
//   ./build/bin/09_show_attend_tell                      # seed 0, into output/09_show_attend_tell
//   ./build/bin/09_show_attend_tell --image my.png       # caption your own picture too
//   ./build/bin/09_show_attend_tell --help               # the flags
//
// The sections follow the chapter: the canvases, the encoder, the decoder trained, the
// captions scored, where the attention looks (and that it moves), the lambda table, the
// figures, and your own image. The model is the library's (seq/captioning/); lesson.h lists
// the flags, report.cpp and figures.cpp what the sections print and draw.
#include <chrono>

#include "lesson.h"

using namespace attend;
using namespace attend::lesson09;

namespace {

constexpr const char* kDescription =
    "Lesson 09: Show, Attend and Tell with soft attention on canvas captions: training, exact "
    "match, BLEU-4, localisation, the lambda table and attention strips "
    "(docs/09_show_attend_tell.md).";

// The flags' gate and f_init.
void configure(CaptionDecoder& decoder, const Options& o) {
  decoder.use_gate = o.gate;
  decoder.init_from_image = o.init;
}

// Section 7: the second decoder, the same but for lambda (trained beside the first, in
// section 3), and the table of the two.
void section_lambda(app::Transcript& t, const Options& o, const PreparedCanvases& d,
                    const CaptionScores& first, CaptionDecoder& twin, const Training& training) {
  t.heading("7. What the doubly stochastic regulariser does");
  t.say("A second decoder, the same in every way but lambda = {}:\n", o.compare_lambda);
  print_training(t, o, training);
  CaptionScores other = evaluate(twin, d.test_regions, d.splits.test, d.vocab, o.beam);
  lambda_table(t, {{o.lambda, first}, {o.compare_lambda, other}});
}

int run(const Options& o) {
  if (o.train < o.batch) fail("--train must be at least --batch ({}), got {}", o.batch, o.train);
  // Read the learner's image first: a missing or broken file should not wait for training.
  NDArray picture;
  if (!o.image.empty()) picture = viz::read_image(o.image, viz::ColorMode::kRgb);
  app::make_output_folder(o.out);
  const auto start = std::chrono::steady_clock::now();
  app::Transcript t;
  t.say(
      "Lesson 09: Show, Attend and Tell, soft attention (seed {}, lambda {}, gate {}, beam {},\n"
      "outputs in {})\n",
      o.seed, o.lambda, o.gate ? "on" : "off", o.beam, o.out);
  Generator gen(o.seed);
  RegionEncoder encoder(kEncoderChannels, kRegionFeatures, encoder_labels(), gen);
  PreparedCanvases d = prepare(t, o, encoder);

  t.heading("3. The decoder: f_init, f_att, the gate, the LSTM and the deep output");
  CaptionDecoder decoder(sizes_for(d, o), gen);
  configure(decoder, o);
  // Without the gate (--no-gate) f_beta is never used, and not counted.
  t.say(
      "{} parameters. Loss: -log p(y|a) summed over the caption + lambda sum_i (1 - sum_t\n"
      "alpha_ti)^2 with lambda = {}; Adam lr {}, batch {}, {} epochs.\n",
      decoder.parameters_used(), o.lambda, o.lr, o.batch, o.epochs);
  if (o.lambda_table)
    t.say("Section 7's decoder (lambda = {}) trains {}.\n", o.compare_lambda,
          num_threads() > 1 ? "at the same time, on a second thread" : "after it (one thread)");
  // Section 7's decoder writes nothing this one reads, so it trains at the same time, on a
  // second thread (run_both; one after the other with one thread). An op's numbers do not
  // depend on the thread that runs it: each decoder learns what it would learn alone.
  Generator twin_gen(o.seed + 1000);
  CaptionDecoder twin(sizes_for(d, o), twin_gen);
  configure(twin, o);
  Training training, twin_training;
  auto train_first = [&] {
    training = train(o, d, decoder, o.lambda, gen, "training", o.progress);
  };
  if (o.lambda_table)
    run_both(train_first, [&] {
      twin_training = train(o, d, twin, o.compare_lambda, twin_gen, "training_compare_lambda",
                            /*progress=*/false);
    });
  else
    train_first();  // alone, its ops use all the threads
  print_training(t, o, training);
  plot_training(training.records, o.out);

  CaptionScores greedy = evaluate(decoder, d.test_regions, d.splits.test, d.vocab, 1);
  CaptionScores beam = evaluate(decoder, d.test_regions, d.splits.test, d.vocab, o.beam);
  section_captions(t, o, greedy, beam);
  section_where(t, beam, d.splits.test);
  section_gate(t, decoder, d);
  if (o.lambda_table) section_lambda(t, o, d, beam, twin, twin_training);
  write_strips(t, o, decoder, d);
  if (picture.defined()) caption_image(t, o, picture, encoder, decoder, d);
  t.say("\nWhole run: {:.0f} s. Wrote {}/summary.txt, training.csv, training.png and strips/.\n",
        app::seconds_since(start), o.out);
  t.save(o.out + "/summary.txt");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "09_show_attend_tell", kDescription);
  return app::run_program([&] { return run(o); });
}
