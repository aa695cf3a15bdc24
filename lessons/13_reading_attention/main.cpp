// Lesson 13: reading attention maps. Run it and read docs/13_reading_attention.md next to it:
//
//   ./build/bin/11_transformer          # first: lesson 11 saves the model part 2 reads
//   ./build/bin/13_reading_attention    # seed 0, into output/13_reading_attention
//   ./build/bin/13_reading_attention --synthetic   # part 1 without the Fashion-MNIST files
//   ./build/bin/13_reading_attention --help
//
// Which map says what a model looked at? Part 1 trains a small Vision Transformer on lesson
// 08's canvases beside lesson 08's CNN, computes every method's map of every (test canvas,
// class) pair - raw attention, rollout, flow, gradient-weighted relevance, Grad-CAM on tokens,
// gradient saliency, two baselines - scores them against the true boxes and against the model
// (deletion and insertion), and checks that they change when the model does (Adebayo et al.).
// Part 2 reads lesson 11's Transformer: its raw
// cross-attention, attention rollout and gradient-weighted relevance are scored against the
// input characters each output digit truly comes from; then its heads are masked one by one
// and pruned, and its cross-attention is permuted or replaced at inference, to see how much
// the output depends on where attention looked.
#include <chrono>
#include <filesystem>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson13;

namespace {

// Part 1: a Vision Transformer on the canvases, its sections in the chapter's order.
void part_images(app::Transcript& t, const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  // Each section works with arrays of its own sizes (Fashion-MNIST's pictures, training
  // batches, batches of maps, masked canvases); after it, the blocks the allocator keeps for
  // reuse (tensor/allocator.h) go back to the system, which keeps the run under 0.5 GB.
  vision::CanvasData d = section_canvases(t, o);
  memory::empty_cache();
  const auto classes = static_cast<Index>(d.class_names.size());
  Generator gen(o.seed);
  vision::CamClassifier cnn(vision::EncoderShape{}, classes, gen);
  CanvasVit vit(vit_config(o, kCanvasSize, classes), pixel_statistics(d.train.images), gen);
  section_classifiers(t, o, d, cnn, vit);
  // Sections 3 and 4 read the test canvases only: the training canvases (197 MB) are freed
  // here, and section 5 makes them again for its second ViT.
  d.train = vision::CanvasSet();
  memory::empty_cache();
  section_map_scores(t, o, d, cnn, vit);
  memory::empty_cache();
  section_method_figure(t, o, d, cnn, vit);
  section_sanity(t, o, d, vit);
  t.say("\nPart 1 took {:.1f} s.\n", app::seconds_since(start));
}

// Part 2: lesson 11's Transformer on dates, its sections in the chapter's order.
void part_dates(app::Transcript& t, const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  DatesSummary summary;
  // As in part 1, the blocks the allocator keeps for reuse go back to the system after each
  // section (decoding batches of every length fill its cache).
  DatesModel m = section_dates_model(t, o);
  summary.exact_match = m.exact_match;
  memory::empty_cache();
  section_dates_methods(t, o, m, summary);
  memory::empty_cache();
  section_dates_heads(t, o, m, summary);
  memory::empty_cache();
  section_dates_replacement(t, o, m, summary);
  t.heading("Dates: summary");
  say_dates_summary(t, summary);
  t.say("Part 2 took {:.1f} s.\n", app::seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "13_reading_attention",
          "Lesson 13: reading attention maps. Part 1: a Vision Transformer on the canvases; raw "
          "attention, rollout, flow, relevance, Grad-CAM and saliency scored against the boxes "
          "and the model, and sanity-checked. Part 2: lesson 11's Transformer on dates: raw "
          "attention, rollout and relevance against the true source spans, heads masked and "
          "pruned, attention replaced at inference (docs/13_reading_attention.md).");
  return app::run_program([&] {
    // A folder the learner named must exist (lesson 08's default may be missing: then the CNN
    // is trained here).
    if (o.images && o.cnn_from != "none" && o.cnn_from != kLesson08Folder &&
        !std::filesystem::is_directory(o.cnn_from))
      fail(
          "--cnn-from: there is no folder '{}' (leave the flag out to read lesson 08's CNN if "
          "it is there, or give none to train it here)",
          o.cnn_from);
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    app::Transcript t;
    t.say("Lesson 13: reading attention maps (seed {}, outputs in {})\n", o.seed, o.out);
    if (o.images) part_images(t, o);
    memory::empty_cache();  // part 1's arrays: none of part 2's sizes
    if (o.dates) part_dates(t, o);
    t.say("\nDone in {:.1f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
