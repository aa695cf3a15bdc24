// Lesson 11: a Transformer on the date task. Run it and read docs/11_transformer.md next to it:
//
//   ./build/bin/11_transformer               # seed 0, into output/11_transformer
//   ./build/bin/11_transformer --ablations   # the ablation table instead (a few minutes)
//   ./build/bin/11_transformer --help        # the flags
//
// No recurrence at all: the encoder's characters attend to each other, the decoder's outputs
// attend to the outputs before them and to the encoder's characters, several heads at once,
// and positional encodings tell the positions apart. The program trains it on the dates of
// lessons 06 and 07, scores it on the same held-out dates, measures where every head of its
// cross-attention looks, and trains lesson 07's RNNsearch in the same run to compare.
#include <chrono>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson11;

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "11_transformer",
          "Lesson 11: an encoder-decoder Transformer on dates: exact match, alignment of every "
          "head, the maps, lesson 07's RNNsearch beside it, ablations (docs/11_transformer.md).");
  if (o.d_model % o.heads != 0) {  // each head gets d_model / heads dimensions
    fmt::print(stderr, "--d-model {} must be a multiple of --heads {}\n", o.d_model, o.heads);
    return 2;
  }
  return app::run_program([&] {
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    app::Transcript t;
    t.say("Lesson 11: a Transformer on dates (seed {}, {} positions, {}, outputs in {})\n", o.seed,
          o.positions, o.norm_first ? "pre-norm" : "post-norm", o.out);
    const seq::DateTask task = seq::make_date_task(static_cast<std::size_t>(o.train_dates),
                                                   static_cast<std::size_t>(o.validation_dates),
                                                   static_cast<std::size_t>(o.test_dates), o.seed);
    Generator gen(o.seed);
    seq::TransformerSeq2Seq model(transformer_sizes(task, o), gen);
    describe_model(t, model, o);
    if (o.ablations) {
      run_ablations(t, task, o);
      t.say("\nTotal time {:.1f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
      t.save(o.out + "/summary.txt");
      return 0;
    }

    const seq::TrainingResult training =
        train_transformer(t, model, task, o, gen, o.out + "/training_dates.csv", true);
    if (o.save_model != "none") {  // lesson 13 reads the trained model instead of training it
      nn::save_checkpoint(o.out + "/" + o.save_model, model);
      t.say("Saved the trained model to {}/{}.\n", o.out, o.save_model);
    }
    ModelScores scores = decode_test_dates(model, task);
    scores.name = "Transformer";
    scores.training = training;
    score_dates(t, model, task, scores, o);
    score_alignment(t, model, task, scores, o);
    if (o.bahdanau) compare_models(t, scores, train_bahdanau(t, task, o));

    t.heading("Summary");
    t.say(
        "Transformer: exact match {:.2f}% (target >= {:.1f}%: {}), trained in {:.1f} s; best "
        "head\n{} aligns {:.1f}% (>= {:.0f}%: {}); last layer's average {:.1f}%.\n",
        100 * scores.exact_match, 100 * kExactMatchTarget,
        scores.exact_match >= kExactMatchTarget ? "met" : "NOT met", training.seconds,
        scores.best_head, 100 * scores.best_head_alignment, 100 * kAlignmentTarget,
        scores.best_head_alignment >= kAlignmentTarget ? "yes" : "no", 100 * scores.alignment);
    t.say("Total time {:.1f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
