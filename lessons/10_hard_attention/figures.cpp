// Lesson 10's figures: the training curves of both models over the seeds, and the hard
// model's captions as attention strips, the region read at each word outlined.
#include <algorithm>

#include "lesson.h"

namespace attend::lesson10 {

namespace {

// The region the hard model read at a word at test time: the most attended one (it decodes
// with Context::kMostAttended). A soft model reads them all: nothing to mark.
Index region_read(const CaptionDecoder& decoder, const NDArray& alpha) {
  if (decoder.context != CaptionDecoder::Context::kMostAttended) return -1;
  const std::vector<double> weights = alpha.to_vector();
  return std::max_element(weights.begin(), weights.end()) - weights.begin();
}

}  // namespace

void plot_curves(const Options& o, const Trained& soft, const Trained& hard) {
  std::vector<viz::Series> series;
  for (std::size_t s = 0; s < soft.nll_curves.size(); ++s)
    for (const auto& [name, trained] : {std::pair{"soft", &soft}, std::pair{"hard", &hard}}) {
      viz::Series line{fmt::format("{} seed {}", name, s)};
      for (std::size_t e = 0; e < trained->nll_curves[s].size(); ++e)
        line.add(static_cast<double>(e + 1), trained->nll_curves[s][e]);
      series.push_back(line);
    }
  viz::CurveOptions look;
  look.title = "Soft and hard attention over seeds";
  look.x_label = "epoch";
  look.y_label = "training -log p(y|.) per caption";
  viz::plot_curves(o.out + "/training.png", series, look);
}

void write_strips(app::Transcript& t, const Options& o, CaptionDecoder& decoder,
                  const PreparedCanvases& d) {
  const std::string folder = o.out + "/strips";
  app::make_output_folder(folder);
  const Index count = std::min<Index>(o.strips, static_cast<Index>(d.splits.test.size()));
  for (Index i = 0; i < count; ++i) {
    Caption caption = greedy_decode(decoder, rows(d.test_regions, {i}))[0];
    std::vector<NDArray> grids;
    viz::StripOptions look;  // each word's map, the region it read outlined
    for (const NDArray& a : caption.alphas) {
      grids.push_back(a.reshape({kGridSide, kGridSide}));
      look.marked_regions.push_back(region_read(decoder, a));
    }
    viz::write_attention_strip(
        fmt::format("{}/hard_{:03d}.png", folder, i),
        viz::resize_bilinear(d.splits.test[static_cast<std::size_t>(i)].image, kStripPixels,
                             kStripPixels),
        grids, words_of(caption, d.vocab), look);
  }
  t.say(
      "Wrote {} strips of the hard model's captions (alpha shown; it reads the brightest\n"
      "region) to {}/hard_000.png ...\n",
      count, folder);
}

void write_viewer_data(app::Transcript& t, const Options& o, CaptionDecoder& soft,
                       CaptionDecoder& hard, const PreparedCanvases& d) {
  viz::AttentionRun run{.lesson = "10_hard_attention",
                        .title = "soft and hard attention of the greedy captions of test canvases",
                        .kind = "image",
                        .seed = o.seed,
                        .flags = fmt::format("--epochs {} --seeds {}", o.epochs, o.seeds)};
  const Index count = std::min<Index>(o.strips, static_cast<Index>(d.splits.test.size()));
  for (Index i = 0; i < count; ++i) {
    const data::CanvasExample& canvas = d.splits.test[static_cast<std::size_t>(i)];
    run.examples.push_back(canvas_attention_example(canvas, fmt::format("test canvas {}", i)));
    for (auto [name, decoder] : {std::pair{"soft", &soft}, std::pair{"hard", &hard}})
      add_caption_maps(run.examples.back(), greedy_decode(*decoder, rows(d.test_regions, {i}))[0],
                       d.vocab, name);
  }
  if (count > 0)
    t.say(
        "Wrote {}/attention.json (both models' captions of {} canvases); to explore it, open {}.\n",
        o.out, count, viz::write_attention_run(o.out, run).string());
}

}  // namespace attend::lesson10
