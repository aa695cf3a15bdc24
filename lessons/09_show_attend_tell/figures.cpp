// Lesson 09's figures: the training curves, one attention strip per test caption (the canvas,
// then per word the attention that chose it), and the learner's own picture captioned.
#include <fmt/ranges.h>

#include <algorithm>

#include "lesson.h"

namespace attend::lesson09 {

namespace {

constexpr Index kViewerCaptions = 50;  // test captions written for the interactive viewer

// The strip of one caption: the canvas at kStripPixels, then per word its attention map.
void write_caption_strip(const std::string& png, const NDArray& canvas, const Caption& caption,
                         const Vocabulary& vocab) {
  std::vector<NDArray> grids;
  for (const NDArray& a : caption.alphas) grids.push_back(a.reshape({kGridSide, kGridSide}));
  viz::write_attention_strip(png, viz::resize_bilinear(canvas, kStripPixels, kStripPixels), grids,
                             words_of(caption, vocab));
}

}  // namespace

void plot_training(const std::vector<CaptionEpoch>& records, const std::string& out) {
  viz::Series nll{"caption nll (train)"}, accuracy{"word accuracy (validation)"};
  accuracy.right_axis = true;
  for (const CaptionEpoch& r : records) {
    nll.add(r.epoch, r.nll);
    accuracy.add(r.epoch, r.validation_word_accuracy);
  }
  viz::plot_curves(out + "/training.png", {nll, accuracy},
                   {.title = "Soft attention: training",
                    .x_label = "epoch",
                    .y_label = "-log p(y|a) per caption",
                    .y2_label = "word accuracy"});
}

void write_strips(app::Transcript& t, const Options& o, CaptionDecoder& decoder,
                  const PreparedCanvases& d) {
  t.heading("8. The figures");
  const std::string folder = o.out + "/strips";
  app::make_output_folder(folder);
  const Index count = std::min<Index>(o.strips, static_cast<Index>(d.splits.test.size()));
  viz::AttentionRun run{.lesson = "09_show_attend_tell",
                        .title = "soft attention of the beam-search captions of test canvases",
                        .kind = "image",
                        .seed = o.seed,
                        .flags = fmt::format("--epochs {} --beam {}", o.epochs, o.beam)};
  std::vector<Caption> captions;
  for (Index i = 0; i < count; ++i)
    captions.push_back(beam_decode(decoder, rows(d.test_regions, {i}), std::max<Index>(1, o.beam)));
  // Drawing and compressing the PNGs takes most of this section's time (about 10 ms a strip),
  // and no strip depends on another: the threads share them out.
  parallel_for(count, 1, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i)
      write_caption_strip(fmt::format("{}/test_{:03d}.png", folder, i),
                          d.splits.test[static_cast<std::size_t>(i)].image,
                          captions[static_cast<std::size_t>(i)], d.vocab);
  });
  for (Index i = 0; i < std::min(count, kViewerCaptions); ++i) {  // the viewer's file stays small
    const data::CanvasExample& canvas = d.splits.test[static_cast<std::size_t>(i)];
    run.examples.push_back(canvas_attention_example(canvas, fmt::format("test canvas {}", i)));
    add_caption_maps(run.examples.back(), captions[static_cast<std::size_t>(i)], d.vocab, "soft");
  }
  t.say(
      "Wrote {} strips, {}/test_000.png ...: the canvas, then per generated word the\n"
      "attention map upsampled over it (with its grid of weights in the .txt beside each PNG).\n",
      count, folder);
  if (!run.examples.empty())
    t.say("Wrote {}/attention.json (the first {} captions); to explore it, open {}.\n", o.out,
          run.examples.size(), viz::write_attention_run(o.out, run).string());
}

void caption_image(app::Transcript& t, const Options& o, const NDArray& picture,
                   RegionEncoder& encoder, CaptionDecoder& decoder, const PreparedCanvases& d) {
  t.heading("9. Your image");
  NDArray canvas = viz::resize_bilinear(picture, kCanvasSize, kCanvasSize);
  Tensor regions;
  {
    NoGradGuard no_graph;
    regions = encoder.regions(Tensor(canvas.reshape({1, 3, kCanvasSize, kCanvasSize})));
  }
  Caption caption = beam_decode(decoder, regions, std::max<Index>(1, o.beam));
  const std::string png = o.out + "/your_image.png";
  write_caption_strip(png, canvas, caption, d.vocab);
  t.say("{} ({}x{} pixels, resized to {}x{}): \"{}\"\nIts attention strip: {}\n", o.image,
        picture.size(2), picture.size(1), kCanvasSize, kCanvasSize,
        fmt::join(words_of(caption, d.vocab), " "), png);
}

}  // namespace attend::lesson09
