#include "nn/viz/heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nn/viz/gnuplot.h"
#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {
namespace {

struct Matrix {
  Index rows = 0, columns = 0;
  std::vector<double> values;     // row-major
  bool single_precision = false;  // float32: written to the data file as floats
};

Matrix checked_matrix(const NDArray& matrix, std::string_view op, std::string_view what) {
  check_defined(matrix, op, what);
  if (matrix.ndim() != 2 || matrix.numel() == 0) {
    fail("{}: {} must be a non-empty 2-D matrix, not {}", op, what, to_string(matrix.shape()));
  }
  Matrix m{matrix.size(0), matrix.size(1), matrix.to_vector(), matrix.dtype() == kFloat32};
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    if (!std::isfinite(m.values[i])) {
      fail("{}: {} has a non-finite value ({}) at row {}, column {}", op, what, m.values[i],
           static_cast<Index>(i) / m.columns, static_cast<Index>(i) % m.columns);
    }
  }
  return m;
}

void check_labels(const HeatmapOptions& options, const Matrix& m, std::string_view op) {
  const auto count_ok = [](const std::vector<std::string>& labels, Index size) {
    return labels.empty() || static_cast<Index>(labels.size()) == size;
  };
  if (!count_ok(options.row_labels, m.rows)) {
    fail("{}: {} row labels for {} rows", op, options.row_labels.size(), m.rows);
  }
  if (!count_ok(options.column_labels, m.columns)) {
    fail("{}: {} column labels for {} columns", op, options.column_labels.size(), m.columns);
  }
}

struct Range {
  double low, high;
};

Range colour_range(const HeatmapOptions& options, const std::vector<const Matrix*>& matrices,
                   std::string_view op) {
  double low = matrices.front()->values.front(), high = low;
  for (const Matrix* m : matrices) {
    for (double v : m->values) {
      low = std::min(low, v);
      high = std::max(high, v);
    }
  }
  Range range{options.min_value.value_or(low), options.max_value.value_or(high)};
  if (!std::isfinite(range.low) || !std::isfinite(range.high) || range.low > range.high) {
    fail("{}: the colour range [{}, {}] is not a range", op, range.low, range.high);
  }
  // A constant matrix still needs a range of some width for the colour bar.
  if (range.low == range.high) range.high = range.low + 1;
  return range;
}

// The comment lines naming the rows and columns, then the matrix, one row per line.
void write_matrix_block(std::ofstream& out, const Matrix& m, const HeatmapOptions& options) {
  for (std::size_t i = 0; i < options.row_labels.size(); ++i) {
    out << "# row " << i << ": " << one_line(options.row_labels[i]) << "\n";
  }
  for (std::size_t j = 0; j < options.column_labels.size(); ++j) {
    out << "# column " << j << ": " << one_line(options.column_labels[j]) << "\n";
  }
  out << "# " << m.rows << " rows x " << m.columns << " columns, one row per line:\n";
  for (Index i = 0; i < m.rows; ++i) {
    for (Index j = 0; j < m.columns; ++j) {
      out << (j == 0 ? "" : " ") << number_text(m.values[i * m.columns + j], m.single_precision);
    }
    out << "\n";
  }
}

void write_header(std::ofstream& out, const std::string& kind, const HeatmapOptions& options) {
  out << "# attend " << kind << ": " << one_line(options.title) << "\n"
      << "# rows (y axis, row 0 at the top): " << one_line(options.y_label) << "\n"
      << "# columns (x axis): " << one_line(options.x_label) << "\n"
      << "# colour: " << one_line(options.value_label) << "\n";
}

// Tics at every row/column when they fit, every step-th otherwise.
std::string numbered_tics(const char* axis, Index size) {
  const Index step = std::max<Index>(1, (size + 19) / 20);
  return fmt::format("set {} 0,{},{}\n", axis, step, size - 1);
}

// Everything one heatmap needs before its plot command: labels, tics, ranges.
std::string axes_script(const HeatmapOptions& options, const std::string& title, const Matrix& m,
                        Range range) {
  using detail::gnuplot_number;
  using detail::gnuplot_quote;
  std::string script =
      fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset cblabel {}\n",
                  gnuplot_quote(title), gnuplot_quote(options.x_label),
                  gnuplot_quote(options.y_label), gnuplot_quote(options.value_label));
  script += "unset key\nset tics nomirror out\n";
  script +=
      options.column_labels.empty()
          ? numbered_tics("xtics", m.columns)
          : "set xtics " + detail::gnuplot_tics(options.column_labels) + " rotate by 45 right\n";
  script += options.row_labels.empty()
                ? numbered_tics("ytics", m.rows)
                : "set ytics " + detail::gnuplot_tics(options.row_labels) + "\n";
  // Cell (i, j) is centred on (j, i); the reversed y range puts row 0 at the top.
  script += fmt::format("set xrange [-0.5:{}]\nset yrange [{}:-0.5]\nset cbrange [{}:{}]\n",
                        gnuplot_number(static_cast<double>(m.columns) - 0.5),
                        gnuplot_number(static_cast<double>(m.rows) - 0.5),
                        gnuplot_number(range.low), gnuplot_number(range.high));
  return script;
}

// The plot command for block `index` of the data file: the cells, and optionally their
// values as text, dark on the bright end of the palette and white on the dark end.
std::string plot_command(const std::filesystem::path& data, int index,
                         const HeatmapOptions& options, Range range) {
  std::string command = fmt::format("plot {} index {} matrix with image",
                                    detail::gnuplot_quote(data.string()), index);
  if (options.show_values) {
    const int digits = std::clamp(options.value_digits, 1, 12);
    const double switch_at = range.low + 0.6 * (range.high - range.low);
    command += fmt::format(
        ", '' index {} matrix using 1:2:(sprintf('%.{}g', $3)):($3 > {} ? 0x000000 : 0xffffff) "
        "with labels tc rgb variable",
        index, digits, detail::gnuplot_number(switch_at));
  }
  return command + "\n";
}

// A size that gives cells of 14 to 48 pixels plus room for the labels.
std::pair<int, int> automatic_size(const Matrix& m, const HeatmapOptions& options) {
  const auto longest = [](const std::vector<std::string>& labels) {
    std::size_t n = 0;
    for (const std::string& s : labels) n = std::max(n, s.size());
    return static_cast<int>(std::min<std::size_t>(n, 30));
  };
  const int cell = static_cast<int>(std::clamp<Index>(560 / std::max(m.rows, m.columns), 14, 48));
  const int width = 230 + static_cast<int>(m.columns) * cell + 7 * longest(options.row_labels);
  const int height = 170 + static_cast<int>(m.rows) * cell + 5 * longest(options.column_labels);
  return {std::clamp(width, 360, 2400), std::clamp(height, 300, 2400)};
}

void check_size(int width, int height, std::string_view op) {
  if (width < 64 || height < 64 || width > 8192 || height > 8192) {
    fail("{}: the size {}x{} must be between 64 and 8192 pixels per side", op, width, height);
  }
}

}  // namespace

bool plot_heatmap(const std::filesystem::path& png, const NDArray& matrix,
                  const HeatmapOptions& options) {
  const std::string_view op = "plot_heatmap";
  check_png_path(png, op);
  const Matrix m = checked_matrix(matrix, op, "the matrix");
  check_labels(options, m, op);
  const Range range = colour_range(options, {&m}, op);
  auto [width, height] = automatic_size(m, options);
  if (options.width > 0) width = options.width;
  if (options.height > 0) height = options.height;
  check_size(width, height, op);

  const std::filesystem::path data = data_path_for(png);
  std::ofstream out = open_for_writing(data, op);
  write_header(out, "heatmap", options);
  write_matrix_block(out, m, options);
  finish_writing(out, data, op);

  std::string script = detail::gnuplot_preamble(png, width, height);
  script += axes_script(options, options.title, m, range);
  script += plot_command(data, 0, options, range);
  return detail::run_gnuplot(script, png, width, height, op);
}

bool plot_attention(const std::filesystem::path& png, const NDArray& weights,
                    const std::vector<std::string>& query_tokens,
                    const std::vector<std::string>& key_tokens, const std::string& title) {
  HeatmapOptions options;
  options.title = title;
  options.x_label = "keys (source tokens)";
  options.y_label = "queries (output tokens)";
  options.value_label = "attention weight";
  options.row_labels = query_tokens;
  options.column_labels = key_tokens;
  options.min_value = 0;  // zero attention is black; the largest weight is the brightest
  return plot_heatmap(png, weights, options);
}

bool plot_confusion_matrix(const std::filesystem::path& png, const NDArray& counts,
                           const std::vector<std::string>& class_names, const std::string& title) {
  HeatmapOptions options;
  options.title = title;
  options.x_label = "predicted class";
  options.y_label = "true class";
  options.value_label = "count";
  options.row_labels = class_names;
  options.column_labels = class_names;
  options.min_value = 0;
  options.show_values = true;
  options.value_digits = 9;  // counts are printed whole
  return plot_heatmap(png, counts, options);
}

bool plot_heatmap_panel(const std::filesystem::path& png, const std::vector<HeatmapPanel>& panels,
                        const PanelOptions& options) {
  const std::string_view op = "plot_heatmap_panel";
  check_png_path(png, op);
  if (panels.empty()) fail("plot_heatmap_panel: '{}': no panels to draw", png.string());
  if (options.columns < 0)
    fail("plot_heatmap_panel: columns must be >= 0, not {}", options.columns);
  const HeatmapOptions& shared = options.heatmap;
  std::vector<Matrix> matrices;
  std::vector<const Matrix*> pointers;
  for (std::size_t k = 0; k < panels.size(); ++k) {
    matrices.push_back(checked_matrix(panels[k].matrix, op, fmt::format("panel {}", k)));
    check_labels(shared, matrices.back(), op);
  }
  for (const Matrix& m : matrices) pointers.push_back(&m);
  const Range range = colour_range(shared, pointers, op);

  const int count = static_cast<int>(panels.size());
  const int columns = options.columns > 0
                          ? std::min(options.columns, count)
                          : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  const int rows = (count + columns - 1) / columns;
  const int panel_width = shared.width > 0 ? shared.width : 380;
  const int panel_height = shared.height > 0 ? shared.height : 340;
  const int title_space = shared.title.empty() ? 0 : 30;
  const int width = columns * panel_width, height = rows * panel_height + title_space;
  check_size(width, height, op);

  const std::filesystem::path data = data_path_for(png);
  std::ofstream out = open_for_writing(data, op);
  write_header(out, "heatmap panel", shared);
  out << "# " << count << " panels, one block each, separated by two blank lines.\n";
  for (std::size_t k = 0; k < panels.size(); ++k) {
    out << (k == 0 ? "" : "\n\n") << "# panel " << k << ": " << one_line(panels[k].title) << "\n";
    write_matrix_block(out, matrices[k], shared);
  }
  finish_writing(out, data, op);

  std::string script = detail::gnuplot_preamble(png, width, height);
  script += fmt::format("set multiplot layout {},{} title {}\n", rows, columns,
                        detail::gnuplot_quote(shared.title));
  for (int k = 0; k < count; ++k) {
    script += axes_script(shared, panels[k].title, matrices[k], range);
    script += plot_command(data, k, shared, range);
  }
  script += "unset multiplot\n";
  return detail::run_gnuplot(script, png, width, height, op);
}

}  // namespace attend::viz
