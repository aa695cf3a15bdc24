// Running gnuplot: the part the plot functions (curves.h, heatmap.h) share.
//
// A plot is drawn by writing its numbers to a data file and sending gnuplot a script that
// reads that file and writes the PNG, through gnuplot-iostream (a pipe to a gnuplot process).
// gnuplot is a separate program, so it may be missing. Then the plot functions print one
// warning per process, still write the data files, and return false: a training run never
// stops because a picture could not be drawn.
//
// The tests (and a learner without gnuplot) can force that path: set the environment
// variable ATTEND_NO_GNUPLOT=1, or call set_gnuplot_disabled(true).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace attend::viz {

// True when plots can be drawn: an executable `gnuplot` is on the PATH and gnuplot is not
// disabled (by ATTEND_NO_GNUPLOT set to anything but "" or "0", or set_gnuplot_disabled).
bool gnuplot_available();

// Turns gnuplot off (true) for this process, or stops doing so (false; ATTEND_NO_GNUPLOT
// still counts). Each call re-arms the one-time warning, so the next plot that cannot be
// drawn says why again.
void set_gnuplot_disabled(bool disabled);

namespace detail {

// Text as a gnuplot string literal: in single quotes, where only ' is special (written
// twice) and backslashes stay literal. Line breaks (and any control byte) become spaces: a
// label is one line.
std::string gnuplot_quote(std::string_view text);

// Tic labels for positions 0, 1, 2, ...: "('the' 0, 'cat' 1, 'sat' 2)". gnuplot reads each
// label as a format for its tic's value, so a '%' is written "%%".
std::string gnuplot_tics(const std::vector<std::string>& labels);

// A number as gnuplot reads it back exactly (shortest round-trip form, e.g. 0.1 or 1e-05).
std::string gnuplot_number(double value);

// The lines every attend plot starts with: a PNG terminal of width x height pixels writing
// to png, literal text (no "enhanced" markup: '_' and '^' in a token stay themselves),
// and the inferno palette.
std::string gnuplot_preamble(const std::filesystem::path& png, int width, int height);

// Sends script to a new gnuplot process and waits for it to finish. Returns true only if
// png then holds a readable width x height image. Any old file at png is removed first, so
// a stale picture never passes for a new one, and a broken one is removed afterwards.
// When gnuplot is unavailable, warns once (see above) and returns false. op names the plot
// function in warnings.
bool run_gnuplot(const std::string& script, const std::filesystem::path& png, int width, int height,
                 std::string_view op);

}  // namespace detail
}  // namespace attend::viz
