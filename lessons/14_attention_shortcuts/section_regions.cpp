// Section 7 of the program: the grid's limitation. Show, Attend and Tell attends over the 8x8
// cells of a feature map, not over objects: an item straddles cells, a cell holds parts of
// two things, and the attention at a noun spreads over the cells of its object. Here lesson
// 09's captioner is trained twice on the same canvases with the same recipe: once over the
// grid (lesson 09's regions), once over object regions (seq/captioning/object_regions.h: the
// connected components of the canvas's ink, each pooled from the same frozen cells). The
// table: exact match, where the attention is at the nouns, and the time per caption.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <span>

#include "program.h"

namespace attend::lesson14 {
namespace {

using namespace attend::captioning;

// One captioner of the comparison.
struct RegionRun {
  std::string name;
  CaptionScores scores;
  double regions_per_canvas = 0;
  double train_seconds = 0;
  double decode_ms = 0;  // greedy, one canvas at a time
  NDArray figure_maps;   // [T, L]: the attention at each word of the figure's caption
};

// The canvases and lesson 09's encoder: the one lesson 09 cached if it is there (its
// default settings), else a smaller one pre-trained here (and cached for the next run).
PreparedCanvases region_canvases(app::Transcript& t, const Options& o, RegionEncoder& encoder) {
  CanvasPipelineOptions p{.seed = o.seed,
                          .synthetic = o.synthetic,
                          .data = o.data,
                          .all_classes = false,
                          .train = o.region_train,
                          .validation = o.region_validation,
                          .test = o.region_test,
                          .encoder = {},
                          .encoder_singles = 0,  // not printed here
                          .encoder_cache = o.encoder_cache,
                          .object_regions = true,
                          .proposals = {}};
  const bool cached = !o.encoder_cache.empty() && std::filesystem::exists(encoder_cache_file(p));
  if (!cached) p.encoder.steps = o.region_encoder_steps;
  p.encoder.progress = o.progress;  // not in the cache file's name: the same weights either way
  PreparedCanvases d = prepare_canvases(p, encoder);
  if (cached)
    t.say("The encoder is lesson 09's, loaded from {}.\n", d.encoder_loaded_from);
  else
    t.say(
        "Lesson 09's encoder is not in {} (run lesson 09 first to use it): a smaller one, {}\n"
        "pre-training steps instead of {}, {}.\n",
        o.encoder_cache.empty() ? "\"\"" : o.encoder_cache, p.encoder.steps,
        PretrainOptions{}.steps,
        d.encoder_loaded_from.empty() ? "pre-trained here" : "cached by an earlier run");
  t.say(
      "It names {:.1f}% of the objects on the test canvases. {} training, {} validation and {}\n"
      "test canvases, made, encoded and proposed ({:.0f} s).\n",
      100 * d.encoder_canvas_accuracy.noun, o.region_train, o.region_validation, o.region_test,
      d.seconds);
  return d;
}

// The share of the canvases whose proposals are their objects: as many, each object's box
// the box of one proposal.
double proposals_match_objects(const ObjectRegions& objects,
                               const std::vector<CanvasExample>& canvases) {
  Index matched = 0;
  for (std::size_t n = 0; n < canvases.size(); ++n) {
    const auto& boxes = objects.boxes[n];
    bool all = boxes.size() == canvases[n].objects.size();
    for (const data::CanvasObject& object : canvases[n].objects) {
      const data::Box& b = object.box;
      all = all && std::any_of(boxes.begin(), boxes.end(), [&](const data::Box& p) {
              return p.x0 == b.x0 && p.y0 == b.y0 && p.x1 == b.x1 && p.y1 == b.y1;
            });
    }
    matched += all;
  }
  return static_cast<double>(matched) / static_cast<double>(canvases.size());
}

// Milliseconds per caption of `decode` over the canvases, one at a time.
template <class F>
double ms_per_canvas(Index count, F&& decode) {
  NoGradGuard no_graph;
  const auto start = std::chrono::steady_clock::now();
  for (Index i = 0; i < count; ++i) decode(i);
  return 1000 * app::seconds_since(start) / static_cast<double>(count);
}

// Lesson 09's decoder and recipe (its defaults: dropout 0.3, lambda 0, Adam 3e-3 along a
// cosine, batches of 64) on these regions; scored with greedy captions.
RegionRun train_captioner(app::Transcript& t, const Options& o, const PreparedCanvases& d,
                          const std::string& name, const RegionFile& train,
                          const NDArray& validation, const NDArray& test,
                          const ObjectRegions* objects, Index figure) {
  t.say("\n{}: regions of {} numbers, {:.2f} per canvas\n", name, train.shape()[2],
        objects
            ? static_cast<double>(d.test_objects.real_regions) / static_cast<double>(o.region_test)
            : static_cast<double>(test.size(1)));
  Generator gen(o.seed + 900);
  CaptionDecoderSizes sizes{.vocab = d.vocab.size(), .features = train.shape()[2], .dropout = 0.3};
  CaptionDecoder decoder(sizes, gen);
  decoder.padded_regions = objects != nullptr;
  CaptionTrainOptions recipe{.epochs = o.region_epochs,
                             .batch = o.region_batch,
                             .log_path = o.out + "/regions_" + name + ".csv",
                             .progress = o.progress};
  const auto start = std::chrono::steady_clock::now();
  for (const CaptionEpoch& e : train_decoder(decoder, train, d.splits.train, validation,
                                             d.splits.validation, d.vocab, recipe, gen))
    t.say("  epoch {}: caption nll {:.3f} | validation word accuracy {:.1f}%\n", e.epoch, e.nll,
          100 * e.validation_word_accuracy);
  RegionRun run;
  run.name = name;
  run.train_seconds = app::seconds_since(start);
  t.say("  trained ({:.0f} s)\n", run.train_seconds);
  decoder.eval();
  run.regions_per_canvas =
      objects ? static_cast<double>(objects->real_regions) / static_cast<double>(o.region_test)
              : static_cast<double>(test.size(1));
  run.scores = evaluate(
      decoder, test, d.splits.test, d.vocab, 1,
      objects ? region_centres(*objects) : std::vector<std::vector<interpret::RegionCentre>>{});
  run.figure_maps =
      reference_attention(decoder, rows(test, {figure}).data(),
                          {d.splits.test[static_cast<std::size_t>(figure)]}, d.vocab)[0];
  run.decode_ms =
      ms_per_canvas(o.region_test, [&](Index i) { greedy_decode(decoder, rows(test, {i})); });
  return run;
}

// The canvas of the figure: the first test canvas with three objects (or the first).
Index figure_canvas(const std::vector<CanvasExample>& test) {
  for (std::size_t i = 0; i < test.size(); ++i)
    if (test[i].objects.size() == 3) return static_cast<Index>(i);
  return 0;
}

// A map over the canvas's pixels: each grid cell's weight over its square (the grid), or each
// region's weight over its box (the objects; where boxes overlap, the larger weight).
NDArray pixel_map(std::span<const double> weights, const std::vector<data::Box>* boxes,
                  Index side) {
  NDArray map = NDArray::zeros({side, side});
  float* m = map.data<float>();
  if (boxes == nullptr) {
    const Index grid = kGridSide, cell = side / grid;
    for (Index y = 0; y < side; ++y)
      for (Index x = 0; x < side; ++x)
        m[y * side + x] =
            static_cast<float>(weights[static_cast<std::size_t>((y / cell) * grid + x / cell)]);
    return map;
  }
  for (std::size_t k = 0; k < boxes->size(); ++k) {
    const data::Box& b = (*boxes)[k];
    for (Index y = b.y0; y < b.y1; ++y)
      for (Index x = b.x0; x < b.x1; ++x)
        m[y * side + x] = std::max(m[y * side + x], static_cast<float>(weights[k]));
  }
  return map;
}

// regions.png: one test canvas, its reference caption fed in; per word, the grid captioner's
// attention (top row) and the object captioner's (bottom row). Returns the same maps as the
// viewer's example: one step per word, the grid's (its 8x8 cells) and the objects' (each
// proposal's weight over its box) as two methods, the objects' boxes as the truth.
viz::AttentionExample write_region_figure(const std::string& png, const std::string& name,
                                          const CanvasExample& canvas,
                                          const std::vector<data::Box>& proposals,
                                          const RegionRun& grid, const RegionRun& objects) {
  const Index side = canvas.image.size(-1);
  std::vector<data::Box> boxes;
  for (const data::CanvasObject& object : canvas.objects) boxes.push_back(object.box);
  std::vector<std::vector<viz::Panel>> rows = {
      {viz::image_panel(canvas.image, boxes, kZoom, "objects' boxes")},
      {viz::image_panel(canvas.image, proposals, kZoom, "proposals")}};
  viz::AttentionExample e = viz::image_example(name, canvas.image, boxes, "object");
  e.target = canvas.words;
  for (std::size_t t = 0; t < canvas.words.size(); ++t)
    for (int r = 0; r < 2; ++r) {
      const NDArray maps = (r == 0 ? grid : objects).figure_maps.to(kFloat64);
      const std::span<const double> w(maps.data<double>() + static_cast<Index>(t) * maps.size(1),
                                      static_cast<std::size_t>(maps.size(1)));
      rows[static_cast<std::size_t>(r)].push_back(
          viz::map_panel(canvas.image, pixel_map(w, r == 0 ? nullptr : &proposals, side), boxes,
                         kZoom, canvas.words[t]));
      const NDArray cells =
          r == 0 ? pixel_map(w, nullptr, kGridSide) : pixel_map(w, &proposals, side);
      e.maps.push_back({.step = static_cast<int>(t),
                        .method = (r == 0 ? grid : objects).name,
                        .token = canvas.words[t],
                        .values = viz::map_rows(cells)});
    }
  viz::write_panels(png, rows,
                    {.row_labels = {"grid", "objects"},
                     .scale_note = "attention at each word of the reference caption, each map "
                                   "scaled to its own maximum"});
  return e;
}

// The table: the scores side by side (and in regions.csv), then the time per caption.
void say_region_table(app::Transcript& t, const Options& o, std::vector<const RegionRun*> runs,
                      double cnn_ms, double propose_ms) {
  t.say("\nseed {}; {} test canvases, greedy captions. At the nouns, with the reference caption\n",
        o.seed, o.region_test);
  t.say("fed in: is the most attended region's centre in the object's box, and the attention's\n");
  t.say("mass there.\n\n");
  t.say("{:<8} {:>8} {:>8} {:>12} {:>12}\n", "regions", "count", "exact", "noun on obj",
        "mass on obj");
  std::ofstream csv(o.out + "/regions.csv");
  csv << "regions,seed,count,exact_match,noun_on_object,noun_mass_on_object,ms_cnn,ms_proposals,"
         "ms_decoder\n";
  for (const RegionRun* r : runs) {
    const double proposals = r->name == "objects" ? propose_ms : 0.0;
    t.say("{:<8} {:>8.2f} {:>7.1f}% {:>11.1f}% {:>11.1f}%\n", r->name, r->regions_per_canvas,
          100 * r->scores.exact_match, 100 * r->scores.where.noun_hit_rate,
          100 * r->scores.where.noun_mass_in_box);
    csv << fmt::format("{},{},{:.3f},{:.4f},{:.4f},{:.4f},{:.3f},{:.3f},{:.3f}\n", r->name, o.seed,
                       r->regions_per_canvas, r->scores.exact_match, r->scores.where.noun_hit_rate,
                       r->scores.where.noun_mass_in_box, cnn_ms, proposals, r->decode_ms);
  }
  t.say("\nTime per caption, one canvas at a time: the CNN + the proposals and their pooling +\n");
  t.say("the decoder (greedy).\n");
  for (const RegionRun* r : runs) {
    const double proposals = r->name == "objects" ? propose_ms : 0.0;
    t.say("{:<8} {:>5.2f} ms = {:.2f} + {:.2f} + {:.2f}\n", r->name,
          cnn_ms + proposals + r->decode_ms, cnn_ms, proposals, r->decode_ms);
  }
}

// The words a captioner most often got wrong, and its first mistakes.
void say_mistakes(app::Transcript& t, const RegionRun& r) {
  t.say("\n{}: the words most often wrong:", r.name);
  std::vector<std::pair<Index, std::string>> missed;
  for (const auto& [word, count] : r.scores.missed_words) missed.push_back({count, word});
  std::sort(missed.rbegin(), missed.rend());
  for (std::size_t k = 0; k < std::min<std::size_t>(5, missed.size()); ++k)
    t.say(" {} ({})", missed[k].second, missed[k].first);
  t.say("\n");
  for (std::size_t k = 0; k < std::min<std::size_t>(3, r.scores.mistakes.size()); ++k)
    t.say("  {}\n", r.scores.mistakes[k]);
}

}  // namespace

void section_regions(app::Transcript& t, const Options& o) {
  t.heading("7. The grid's limitation: attention over objects");
  Generator gen(o.seed);
  RegionEncoder encoder(kEncoderChannels, kRegionFeatures, encoder_labels(), gen);
  const PreparedCanvases d = region_canvases(t, o, encoder);
  t.say("Proposals: the connected components of each canvas's ink; on {:.1f}% of the test\n",
        100 * proposals_match_objects(d.test_objects, d.splits.test));
  t.say("canvases they are exactly the objects (as many, with the objects' boxes).\n");
  const Index figure = figure_canvas(d.splits.test);
  const RegionRun grid = train_captioner(t, o, d, "grid", d.train_regions, d.validation_regions,
                                         d.test_regions, nullptr, figure);
  // The decoder's training reads its regions from a file (lesson 09's RegionFile); the object
  // regions are small (a few per canvas) but go the same way.
  const Shape object_shape = d.train_objects.regions.shape();
  RegionFile train_objects(object_shape[0], object_shape[1], object_shape[2]);
  train_objects.write(0, d.train_objects.regions);
  const RegionRun objects =
      train_captioner(t, o, d, "objects", train_objects, d.validation_objects.regions,
                      d.test_objects.regions, &d.test_objects, figure);
  // The CNN runs for both; the proposals and their pooling for the objects only.
  const double cnn_ms = ms_per_canvas(o.region_test, [&](Index i) {
    encoder.regions(stack_images({&d.splits.test[static_cast<std::size_t>(i)]}));
  });
  const double propose_ms = ms_per_canvas(o.region_test, [&](Index i) {
    object_regions(rows(d.test_regions, {i}).data(),
                   std::span(d.splits.test).subspan(static_cast<std::size_t>(i), 1));
  });
  say_region_table(t, o, {&grid, &objects}, cnn_ms, propose_ms);
  viz::AttentionRun run{.lesson = "14_attention_shortcuts",
                        .title =
                            "the captioner's attention at each word of a reference caption, "
                            "over the grid and over object regions",
                        .kind = "image",
                        .seed = o.seed,
                        .flags = ""};
  run.examples.push_back(
      write_region_figure(o.out + "/regions.png", fmt::format("test canvas {}", figure),
                          d.splits.test[static_cast<std::size_t>(figure)],
                          d.test_objects.boxes[static_cast<std::size_t>(figure)], grid, objects));
  t.say("\nWrote regions.png: test canvas {}, the attention at each word, grid and objects.\n",
        figure);
  t.say("Wrote {}/captions/attention.json (these maps); to explore it, open {}.\n", o.out,
        viz::write_attention_run(o.out, run, "captions").string());
  for (const RegionRun* r : {&grid, &objects}) say_mistakes(t, *r);
}

}  // namespace attend::lesson14
