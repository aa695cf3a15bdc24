// Heatmaps: a matrix drawn as a grid of coloured cells, row 0 at the top, with a colour bar.
//
//   attention alignment   rows = queries (output tokens), columns = keys (source tokens):
//                         row i shows where the model looked while producing token i
//   confusion matrix      rows = true class, columns = predicted class, counts in the cells
//   panel                 several heatmaps in one PNG, e.g. the heads of a multi-head layer
//
//   viz::plot_attention("out/align.png", weights, {"le", "chat"}, {"the", "cat", "<eos>"});
//
// Writes the PNG (if gnuplot is there, see gnuplot.h) and always a .txt data file beside it:
// comment lines naming the rows and columns, then the matrix, one row per line (a panel
// writes one such block per heatmap, separated by two blank lines). Returns true if the PNG
// was drawn. Token labels are printed literally ('_', '^', '@@' and quotes included).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::viz {

struct HeatmapOptions {
  std::string title;
  std::string x_label;                     // what the columns are, e.g. "keys (source tokens)"
  std::string y_label;                     // what the rows are, e.g. "queries (output tokens)"
  std::string value_label;                 // the colour bar, e.g. "attention weight"
  std::vector<std::string> row_labels;     // one per row, or none (rows are numbered)
  std::vector<std::string> column_labels;  // one per column (drawn rotated), or none
  // The values mapped to the darkest and brightest colours; by default the matrix's
  // smallest and largest values.
  std::optional<double> min_value, max_value;
  bool show_values = false;   // print each cell's value in it
  int value_digits = 3;       // significant digits of those printed values
  int width = 0, height = 0;  // PNG size in pixels; 0: chosen from the matrix size
};

// Any 2-D matrix [rows, columns], float or int64. Throws attend::Error for a matrix that is
// not 2-D, empty or not finite, label counts that do not match, or a path not ending in .png.
bool plot_heatmap(const std::filesystem::path& png, const NDArray& matrix,
                  const HeatmapOptions& options = {});

// Attention weights [queries, keys]: rows labelled with the query tokens, columns with the
// key tokens, colours from 0 (black) to the largest weight (pale yellow).
bool plot_attention(const std::filesystem::path& png, const NDArray& weights,
                    const std::vector<std::string>& query_tokens,
                    const std::vector<std::string>& key_tokens, const std::string& title = "");

// A confusion matrix counts[true class, predicted class], with the counts printed in the
// cells. A perfect classifier has everything on the diagonal.
bool plot_confusion_matrix(const std::filesystem::path& png, const NDArray& counts,
                           const std::vector<std::string>& class_names,
                           const std::string& title = "");

struct HeatmapPanel {
  std::string title;  // e.g. "head 3"
  NDArray matrix;
};

struct PanelOptions {
  // Shared by every panel: labels, colour range (by default the range over all panels, so
  // the same colour means the same value in each), show_values. Its title is the whole
  // figure's; its width and height are one panel's (0: 380 x 340).
  HeatmapOptions heatmap;
  int columns = 0;  // panels per row; 0: as square a layout as possible
};

// Several heatmaps side by side in one PNG (gnuplot's multiplot).
bool plot_heatmap_panel(const std::filesystem::path& png, const std::vector<HeatmapPanel>& panels,
                        const PanelOptions& options = {});

}  // namespace attend::viz
