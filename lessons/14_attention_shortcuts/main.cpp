// Lesson 14: when attention is wrong. Run it and read docs/14_attention_shortcuts.md next to it:
//
//   ./build/bin/14_attention_shortcuts               # Fashion-MNIST canvases, seed 0
//   ./build/bin/14_attention_shortcuts --seed 1      # the check with a second seed
//   ./build/bin/14_attention_shortcuts --synthetic   # the generated stand-in, no data files
//   ./build/bin/14_attention_shortcuts --part regions  # section 7 alone
//   ./build/bin/14_attention_shortcuts --help        # the flags
//
// The sections follow the chapter: canvases where a band comes with trousers; a classifier
// trained as usual learns the band; GAIN, GAIN with a few boxes, and adversarial erasing try to
// move its attention to the item; one table, and the maps on conflicting canvases. Then
// (section 7, section_regions.cpp) lesson 09's captioner attends over a grid or over objects.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>

#include "attend.h"
#include "program.h"

using namespace attend;
using namespace attend::lesson14;
using attend::app::Transcript;

namespace lesson14_main {

// The time each section took, said at its end: the process's CPU time (every thread's, what
// the 3-minute budget on 2 cores is about) and the wall time (which a loaded machine stretches).
class SectionClock {
 public:
  void say(Transcript& t, int section) {
    const std::clock_t cpu = std::clock();
    const auto wall = std::chrono::steady_clock::now();
    t.say("\nSection {}: {:.1f} s of CPU time ({:.0f} s)\n", section,
          static_cast<double>(cpu - cpu_) / CLOCKS_PER_SEC,
          std::chrono::duration<double>(wall - wall_).count());
    cpu_ = cpu;
    wall_ = wall;
  }

 private:
  std::clock_t cpu_ = std::clock();
  std::chrono::steady_clock::time_point wall_ = std::chrono::steady_clock::now();
};

// A baseline gap below this is no shortcut (a band independent of the class in training gives
// 0.007, exercise 4): the shares of it that the fixes close would be ratios of noise.
constexpr double kSmallestGap = 0.05;

// Share of the canvases of the cue class that have the band, among the canvases with or
// without the class.
void say_cue_rates(Transcript& t, const std::string& split, const CueSet& s, Index label) {
  double with = 0, with_band = 0, without = 0, without_band = 0;
  for (Index i = 0; i < s.set.size(); ++i) {
    const bool band = s.has_cue[static_cast<std::size_t>(i)];
    if (s.set.labels.at({i, label}) > 0) {
      with += 1;
      with_band += band;
    } else {
      without += 1;
      without_band += band;
    }
  }
  t.say("{:<12} {:>8} {:>8.1f}% {:>10} {:>8.1f}%\n", split, with,
        100 * with_band / std::max(1.0, with), without,
        100 * without_band / std::max(1.0, without));
}

}  // namespace lesson14_main

namespace attend::lesson14 {

ShortcutData section_data(Transcript& t, const Options& o) {
  t.heading("1. Canvases where a band comes with one class");
  DataOptions options{.train = o.train,
                      .validation = o.validation,
                      .test = o.test,
                      .seed = o.seed,
                      .synthetic = o.synthetic,
                      .folder = o.data,
                      .box_share = o.box_share};
  options.cue = {
      .label = o.cue_class, .p_with = o.p_with, .p_without = o.p_without, .thickness = o.band};
  ShortcutData d = make_shortcut_data(options);
  const std::string name = d.class_names[static_cast<std::size_t>(d.cue_class)];
  t.say("{} pictures of 5 classes on 64x64 canvases. A {}-pixel tinted band is painted beside\n",
        o.synthetic ? "Synthetic" : "Fashion-MNIST", o.band);
  t.say("the items of the canvases; how often depends on whether a {} is there:\n\n", name);
  t.say("{:<12} {:>8} {:>9} {:>10} {:>9}\n", "set", "with", "band", "without", "band");
  lesson14_main::say_cue_rates(t, "training", d.train, d.cue_class);
  lesson14_main::say_cue_rates(t, "validation", d.validation, d.cue_class);
  lesson14_main::say_cue_rates(t, "aligned", d.aligned, d.cue_class);
  lesson14_main::say_cue_rates(t, "conflicting", d.conflicting, d.cue_class);
  lesson14_main::say_cue_rates(t, "independent", d.independent, d.cue_class);
  const auto boxed = std::count(d.boxed.begin(), d.boxed.end(), true);
  t.say("\nThe three test sets are the same {} canvases, the band moved by the rule.\n", o.test);
  t.say("GAIN_ext may use the boxes of {} training canvases ({:.1f}%).\n", boxed,
        100.0 * static_cast<double>(boxed) / static_cast<double>(d.train.set.size()));
  return d;
}

}  // namespace attend::lesson14

namespace lesson14_main {

void section_table(Transcript& t, const Options& o, const std::vector<const Trained*>& rows) {
  t.heading("6. The shortcut and its fixes, side by side");
  t.say("seed {}; balanced accuracy of the cue class on each test set, and where its map lies\n",
        o.seed);
  t.say("on aligned canvases with the item (share of the map's mass).\n\n");
  t.say("{:<10} {:>8} {:>11} {:>7} {:>11} {:>8} {:>8}\n", "model", "aligned", "conflicting", "gap",
        "independent", "on band", "in box");
  std::ofstream csv(o.out + "/results.csv");
  csv << "model,seed,aligned,conflicting,gap,independent,mass_on_cue,mass_in_box\n";
  for (const Trained* r : rows) {
    const ShortcutScores& s = r->scores;
    t.say("{:<10} {:>8.3f} {:>11.3f} {:>7.3f} {:>11.3f} {:>7.1f}% {:>7.1f}%\n", r->name, s.aligned,
          s.conflicting, s.gap(), s.independent, 100 * s.mass_on_cue, 100 * s.mass_in_box);
    csv << fmt::format("{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f}\n", r->name, o.seed,
                       s.aligned, s.conflicting, s.gap(), s.independent, s.mass_on_cue,
                       s.mass_in_box);
  }
  const double gap = rows[0]->scores.gap();
  if (gap < kSmallestGap) {
    t.say("\nThe baseline shows no gap ({:.3f}): no shortcut to fix.\n", gap);
    return;
  }
  t.say("\nShare of the baseline's gap that each fix closes (negative: it widens):\n");
  for (std::size_t r = 1; r < rows.size(); ++r)
    t.say("  {:<10} {:>5.0f}%\n", rows[r]->name, 100 * (1 - rows[r]->scores.gap() / gap));
}

// overlays.png: `count` conflicting canvases with the item (and no band), then `count` with
// the band (and no item), every model's map of the cue class.
void section_figures(Transcript& t, const Options& o, const ShortcutData& d,
                     const std::vector<const Trained*>& rows) {
  if (o.figures == 0) return;
  std::vector<Index> item, band;
  for (Index i = 0; i < d.conflicting.set.size(); ++i) {
    auto& list = d.conflicting.set.labels.at({i, d.cue_class}) > 0 ? item : band;
    if (static_cast<int>(list.size()) < o.figures) list.push_back(i);
  }
  item.insert(item.end(), band.begin(), band.end());
  std::vector<MapColumn> columns;
  for (const Trained* r : rows) columns.push_back({r->name, r->pointers()});
  viz::AttentionRun run{
      .lesson = "14_attention_shortcuts",
      .title = "each model's map of the cue class on conflicting test canvases (scaled Grad-CAM)",
      .kind = "image",
      .seed = o.seed,
      .flags = fmt::format("--figures {}", o.figures)};
  run.examples =
      write_overlays(o.out + "/overlays.png", d.conflicting, item, d.cue_class,
                     d.class_names[static_cast<std::size_t>(d.cue_class)], columns, kZoom);
  t.say("Wrote overlays.png: conflicting canvases, each model's map of the cue class.\n");
  t.say("Wrote {}/attention.json (these maps and their scores); to explore it, open {}.\n", o.out,
        viz::write_attention_run(o.out, run).string());
}

// Sections 1-6: the shortcut, the three fixes, the table and overlays.png.
void run_shortcuts(Transcript& t, const Options& o) {
  SectionClock clock;
  ShortcutData d = section_data(t, o);
  release_cached_memory();
  clock.say(t, 1);
  GuidedOptions options = training_options(o);
  t.heading("2. The baseline: trained as usual (L_cl)");
  const Trained baseline = section_model(t, o, d, "baseline", options);
  clock.say(t, 2);
  t.heading("3. GAIN: attention mining (L_cl + alpha L_am)");
  options.mining_weight = o.alpha;
  const Trained gain = section_model(t, o, d, "GAIN", options);
  clock.say(t, 3);
  t.heading("4. GAIN_ext: attention mining and a few boxes (+ w L_e)");
  options.extra_weight = o.extra_weight;
  const Trained gain_ext = section_model(t, o, d, "GAIN_ext", options);
  clock.say(t, 4);
  const Trained erasing = section_erasing(t, o, d, baseline);
  clock.say(t, 5);
  const std::vector<const Trained*> rows = {&baseline, &gain, &gain_ext, &erasing};
  section_table(t, o, rows);
  section_figures(t, o, d, rows);
  clock.say(t, 6);
}

}  // namespace lesson14_main

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "14_attention_shortcuts",
          "Lesson 14: a classifier learns a shortcut (a band that comes with one class) and "
          "looks at it; GAIN, GAIN with a few boxes and adversarial erasing try to move its "
          "attention to the item; and lesson 09's captioner attends over a grid or over objects "
          "(docs/14_attention_shortcuts.md).");
  return app::run_program([&] {
    const auto start = std::chrono::steady_clock::now();
    app::make_output_folder(o.out);
    Transcript t;
    t.say("Lesson 14: when attention is wrong (seed {}, outputs in {})\n", o.seed, o.out);
    if (o.part != "regions") lesson14_main::run_shortcuts(t, o);
    if (o.part != "shortcuts") {
      release_cached_memory();
      lesson14_main::SectionClock clock;
      section_regions(t, o);
      clock.say(t, 7);
    }
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
