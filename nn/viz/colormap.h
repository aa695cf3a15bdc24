// The colour map of every attend figure: "inferno" (from matplotlib), which runs from black
// through purple, red and orange to pale yellow. Its brightness rises steadily with the
// value, so "brighter = more" holds in colour and in a grayscale printout alike, and it has
// no bright band in the middle that would draw the eye to mid-sized values (as the old
// rainbow "jet" map does).
//
// Heatmaps (drawn by gnuplot) and attention overlays (drawn here, pixel by pixel) use the
// same control points, so the same weight has the same colour in both.
#pragma once

#include <string>

namespace attend::viz {

struct Rgb {
  double r, g, b;  // each in [0, 1]
};

// The colour of value in [0, 1] (clamped), interpolated linearly between 11 control points.
Rgb inferno(double value);

// The control points as a gnuplot palette command: "set palette defined (0 '#000004', ...)".
std::string gnuplot_palette();

}  // namespace attend::viz
