// Section 6 of the program: the pointing game's scores printed, per map and per class
// (pointing_game.png), and every pair's hits (pointing_pairs.csv).
#include "program.h"

namespace attend::lesson08 {
namespace {

// The per-class table of section 6, printed and drawn as pointing_game.png.
void per_class_table(app::Transcript& t, const Options& o, const PointingResults& p,
                     const std::vector<std::string>& names) {
  const int columns[] = {kCam, kGradCam16, kBrightness};
  t.say("\nPer class (hit rate):\n{:<22} {:>6} {:>8} {:>10} {:>11} {:>8}\n", "class", "pairs",
        "CAM", "Grad-CAM16", "brightness", "random");
  NDArray table = NDArray::zeros({static_cast<Index>(names.size()), 4}, kFloat64);
  for (std::size_t c = 0; c < names.size(); ++c) {
    const auto label = static_cast<Index>(c);
    std::vector<double> row;
    for (int kind : columns) row.push_back(p.all[kind].class_hit_rate(label));
    row.push_back(p.expected_all.class_hit_rate(label));
    t.say("{:<22} {:>6} {:>8.3f} {:>10.3f} {:>11.3f} {:>8.3f}\n", names[c],
          p.all[kCam].pairs(label), row[0], row[1], row[2], row[3]);
    for (Index k = 0; k < 4; ++k) table.set({label, k}, row[static_cast<std::size_t>(k)]);
  }
  const bool drawn = viz::plot_heatmap(
      o.out + "/pointing_game.png", table,
      {.title = fmt::format("Pointing game: hit rate per class (tolerance {} px)", o.tolerance),
       .x_label = "map",
       .y_label = "class",
       .value_label = "hit rate",
       .row_labels = names,
       .column_labels = {"CAM", "Grad-CAM 16x16", "brightness", "random (expected)"},
       .min_value = 0.0,
       .max_value = 1.0,
       .show_values = true,
       .value_digits = 2});
  if (drawn) t.say("Wrote {}/pointing_game.png.\n", o.out);
}

void write_pairs_csv(const std::string& path, const PointingResults& p) {
  viz::CsvLog pairs(path, {"canvas", "class", "distractor", "cam", "grad_cam_8x8", "grad_cam_16x16",
                           "brightness", "centre", "random", "random_expected"});
  for (std::size_t i = 0; i < p.pairs.size(); ++i) {
    std::vector<double> row = {double(p.pairs[i].canvas), double(p.pairs[i].label),
                               double(p.pairs[i].distractor)};
    row.insert(row.end(), p.hits[i].begin(), p.hits[i].end());
    row.push_back(p.random_expected[i]);
    pairs.write_values(row);
  }
}

}  // namespace

void section_pointing(app::Transcript& t, const Options& o, const PointingResults& p,
                      const std::vector<std::string>& names) {
  t.heading("6. The pointing game");
  Index distractor_pairs = 0;
  for (const ClassOnCanvas& pair : p.pairs) distractor_pairs += pair.distractor;
  t.say("{} (test canvas, present class) pairs, {} of them on canvases with another class too.\n",
        p.pairs.size(), distractor_pairs);
  t.say("A hit: the map's largest pixel (bilinear upsampling to 64x64) is within {} pixels\n",
        o.tolerance);
  t.say("of a box of the class. Rates per class, then averaged over the classes (Zhang et al.).\n");
  t.say("Mass in boxes: the share of the map's sum inside the class's boxes, mean over the\n");
  t.say("pairs (a CAM is first shifted to a minimum of 0, as the figures show it).\n\n");
  t.say("{:<30} {:>10} {:>16} {:>14}\n", "map", "hit rate", "with distractor", "mass in boxes");
  for (int kind = 0; kind < kMapKinds; ++kind)
    t.say("{:<30} {:>10.3f} {:>16.3f} {:>14.3f}\n", map_kind_name(kind),
          p.all[kind].class_mean_hit_rate(), p.with_distractor[kind].class_mean_hit_rate(),
          p.all[kind].mean_mass_share());
  t.say("{:<30} {:>10.3f} {:>16.3f} {:>14.3f}\n", "random, expected (area share)",
        p.expected_all.class_mean_hit_rate(), p.expected_with_distractor.class_mean_hit_rate(),
        p.expected_all.mean_mass_share());
  t.say("(Over all pairs without the per-class mean: CAM {:.3f}, random expected {:.3f}.)\n",
        p.all[kCam].hit_rate(), p.expected_all.hit_rate());
  per_class_table(t, o, p, names);
  write_pairs_csv(o.out + "/pointing_pairs.csv", p);
  t.say("Wrote {}/pointing_pairs.csv: every pair's hits.\n", o.out);
}

}  // namespace attend::lesson08
