// Lesson 13: reading attention maps. Run it and read docs/13_reading_attention.md next to it:
//
//   ./build/bin/11_transformer          # first: lesson 11 saves the model part 2 reads
//   ./build/bin/13_reading_attention    # seed 0, into output/13_reading_attention
//   ./build/bin/13_reading_attention --help
//
// Which map says what a model looked at? Part 2 reads lesson 11's Transformer: its raw
// cross-attention, attention rollout and gradient-weighted relevance are scored against the
// input characters each output digit truly comes from; then its heads are masked one by one
// and pruned, and its cross-attention is permuted or replaced at inference, to see how much
// the output depends on where attention looked.
#include <chrono>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson13;

namespace {

// Part 2: lesson 11's Transformer on dates, its sections in the chapter's order.
void part_dates(app::Transcript& t, const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  DatesSummary summary;
  DatesModel m = section_dates_model(t, o);
  summary.exact_match = m.exact_match;
  section_dates_methods(t, o, m, summary);
  section_dates_heads(t, o, m, summary);
  section_dates_replacement(t, o, m, summary);
  t.heading("Dates: summary");
  say_dates_summary(t, summary);
  t.say("Part 2 took {:.1f} s.\n", app::seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "13_reading_attention",
          "Lesson 13: reading attention maps. Part 2: lesson 11's Transformer on dates: raw "
          "attention, rollout and relevance against the true source spans, heads masked and "
          "pruned, attention replaced at inference (docs/13_reading_attention.md).");
  return app::run_program([&] {
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    app::Transcript t;
    t.say("Lesson 13: reading attention maps (seed {}, outputs in {})\n", o.seed, o.out);
    // Part 1: a Vision Transformer on the canvases - to come.
    if (o.dates) part_dates(t, o);
    t.say("\nDone in {:.1f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
