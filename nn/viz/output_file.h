// Where the viz functions put their files. Every plot is a PNG plus the numbers it shows as
// a plain-text file beside it, so a learner (or a test) can check what the picture says:
//
//   plots/loss.png   the picture
//   plots/loss.txt   its data: comment lines starting with '#', then whitespace-separated
//                    numbers (numpy.loadtxt and gnuplot both read it)
//
// Missing folders are created, as `mkdir -p` would.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace attend::viz {

// The data file that goes with a PNG: "plots/loss.png" -> "plots/loss.txt".
std::filesystem::path data_path_for(const std::filesystem::path& png);

// Throws attend::Error naming op unless path ends in ".png" (a plot cannot be a JPEG).
void check_png_path(const std::filesystem::path& path, std::string_view op);

// Creates path's parent folders if needed, then opens path for writing (truncating it), or
// in append mode. Throws attend::Error naming op, the file and the reason if it cannot.
std::ofstream open_for_writing(const std::filesystem::path& path, std::string_view op,
                               bool append = false);

// Creates the parent folders of path, throwing attend::Error naming op if that fails.
void make_parent_folders(const std::filesystem::path& path, std::string_view op);

// A number in the shortest form that reads back as the same value: a float32 value as a
// float ("0.1", not the "0.10000000149011612" its conversion to double would print),
// anything else as a double. Non-finite values print as nan, inf and -inf.
std::string number_text(double value, bool single_precision);

// text on one line (line breaks become spaces), for a comment line of a data file.
std::string one_line(std::string_view text);

// Flushes out and throws attend::Error naming op and path if any write failed (disk full).
void finish_writing(std::ofstream& out, const std::filesystem::path& path, std::string_view op);

}  // namespace attend::viz
