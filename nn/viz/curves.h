// Line plots of training curves: several named series of (x, y) points on one plot, such as
// the training and validation loss per epoch. A quantity with other units (accuracy next to
// a loss) can go on a second y axis on the right.
//
//   viz::Series train{"train loss"}, val{"val loss"};
//   for (int epoch = 1; epoch <= epochs; ++epoch) {
//     ...
//     train.add(epoch, train_loss);
//     val.add(epoch, val_loss);
//     viz::plot_curves("out/loss.png", {train, val}, {.title = "Loss", .x_label = "epoch"});
//   }
//
// Writes out/loss.png (if gnuplot is there, see gnuplot.h) and always out/loss.txt: one
// block of "x y" lines per series, the blocks separated by two blank lines, each headed by
// a comment "# series N: name". Non-finite values are written as nan/inf and show as gaps.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attend::viz {

struct Series {
  std::string name;
  std::vector<double> x = {}, y = {};  // the same length
  bool right_axis = false;             // plot against the second y axis (CurveOptions::y2_label)

  void add(double x_value, double y_value) {
    x.push_back(x_value);
    y.push_back(y_value);
  }
};

struct CurveOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::string y2_label;  // the right axis, used when some series has right_axis = true
  bool log_y = false;    // logarithmic left y axis (losses that fall by decades)
  // A fixed left y range (for example 0 to 1 for an accuracy); when y_min >= y_max gnuplot
  // chooses it from the data.
  double y_min = 0, y_max = 0;
  int width = 800;  // pixels
  int height = 500;
};

// Draws the series on one plot. Returns true if the PNG was drawn, false if not (gnuplot
// missing: one warning per process). Series without points are listed in the data file but
// not drawn; at least one series must have points. Throws attend::Error for mismatched x/y
// lengths, a path not ending in .png, or an unwritable data file.
bool plot_curves(const std::filesystem::path& png, const std::vector<Series>& series,
                 const CurveOptions& options = {});

}  // namespace attend::viz
