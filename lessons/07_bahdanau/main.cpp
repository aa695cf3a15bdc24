// Lesson 07: Bahdanau attention. Run it and read docs/07_bahdanau.md next to it:
//
//   ./build/bin/06_seq2seq                 # first, for the curve without attention
//   ./build/bin/07_bahdanau                # seed 0, into output/07_bahdanau
//   ./build/bin/07_bahdanau --help         # the flags
//
// The decoder no longer gets one vector c for the whole input: at every output step it
// scores every input position against its previous state, and reads a weighted average of
// the encoder's annotations. The program trains it on the dates of lesson 06, measures
// whether it looks at the right characters, compares its accuracy against input length with
// lesson 06's, and then translates German sentences into English.
#include <chrono>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson07;

namespace {

seq::ModelSizes date_sizes(const seq::DateTask& task, const Options& o) {
  return {task.source_vocabulary.size(),
          task.target_vocabulary.size(),
          o.embedding,
          o.hidden,
          o.attention,
          o.maxout};
}

// Stops before any work if the German-English part cannot run.
void check_de_en(const Options& o) {
  if (o.de_en && !data::freedict_available())
    fail(
        "the German-English sentences need the FreeDict dictionary in {} (apt-get install "
        "dict-freedict-deu-eng), or run with --no-de-en",
        data::kFreedictFolder);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "07_bahdanau",
          "Lesson 07: Bahdanau attention on dates (exact match, alignment, accuracy against "
          "length) and on German-English sentences (BLEU) (docs/07_bahdanau.md).");
  return app::run_program([&] {
    check_de_en(o);
    const std::vector<seq::LengthBucket> baseline = read_baseline(o);
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    app::Transcript t;
    t.say("Lesson 07: Bahdanau attention (seed {}, {} scoring, {} output layer, outputs in {})\n",
          o.seed, o.score, o.readout, o.out);
    const seq::DateTask task = seq::make_date_task(static_cast<std::size_t>(o.train_dates),
                                                   static_cast<std::size_t>(o.validation_dates),
                                                   static_cast<std::size_t>(o.test_dates), o.seed);
    Generator gen(o.seed);
    seq::AttentionSeq2Seq model(date_sizes(task, o), seq::parse_scoring(o.score),
                                seq::parse_readout(o.readout), gen);
    describe_model(t, model, o);
    train_and_report_dates(t, model, task, o, gen);
    const DateResults dates = score_dates(t, model, task, o);
    const double alignment = score_alignment(t, task, dates, o);
    compare_lengths(t, task, dates, baseline, o);
    const double dates_seconds = app::seconds_since(start);
    TranslationResults de_en;
    if (o.de_en) de_en = translate_german(t, o);

    t.heading("Summary");
    t.say(
        "dates: exact match {:.2f}% (target >= {:.1f}%), alignment accuracy {:.1f}% (target >= "
        "{:.0f}%), {:.1f} s\n",
        100 * dates.exact_match, 100 * kExactMatchTarget, 100 * alignment, 100 * kAlignmentTarget,
        dates_seconds);
    if (o.de_en)
      t.say("German-English: held-out BLEU-4 {:.2f} (greedy), {:.2f} (beam width {})\n",
            100 * de_en.greedy_bleu, 100 * de_en.beam_bleu, o.beam);
    t.say("Total time {:.1f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
