#include "nn/viz/curves.h"

#include <fmt/format.h>

#include "nn/viz/gnuplot.h"
#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {

bool plot_curves(const std::filesystem::path& png, const std::vector<Series>& series,
                 const CurveOptions& options) {
  const std::string_view op = "plot_curves";
  check_png_path(png, op);
  if (options.width < 64 || options.height < 64 || options.width > 8192 || options.height > 8192) {
    fail("plot_curves: the size {}x{} must be between 64 and 8192 pixels per side", options.width,
         options.height);
  }
  bool any_points = false;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size()) {
      fail("plot_curves: series '{}' has {} x values but {} y values", s.name, s.x.size(),
           s.y.size());
    }
    any_points = any_points || !s.x.empty();
  }
  if (!any_points) fail("plot_curves: '{}': no series has any points to plot", png.string());

  // The data file, written first: gnuplot reads the numbers from it, so the picture shows
  // exactly what the file says.
  const std::filesystem::path data = data_path_for(png);
  std::ofstream out = open_for_writing(data, op);
  out << "# attend curves: " << one_line(options.title) << "\n"
      << "# x: " << one_line(options.x_label) << "\n"
      << "# y: " << one_line(options.y_label) << "\n";
  if (!options.y2_label.empty()) out << "# y2 (right axis): " << one_line(options.y2_label) << "\n";
  out << "# One block per series, blocks separated by two blank lines; each line is x y.\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    if (i > 0) out << "\n\n";
    out << "# series " << i << ": " << one_line(s.name) << (s.right_axis ? " (right axis)" : "")
        << "\n";
    for (std::size_t k = 0; k < s.x.size(); ++k) out << fmt::format("{} {}\n", s.x[k], s.y[k]);
  }
  finish_writing(out, data, op);

  bool uses_right_axis = false;
  std::string plot_command = "plot ";
  int gnuplot_index = 0;  // gnuplot numbers only the blocks that have data
  for (const Series& s : series) {
    if (s.x.empty()) continue;
    // A short series gets point markers too: a single point would draw no line at all.
    const char* style = s.x.size() <= 50 ? "linespoints pt 7 ps 0.6" : "lines";
    plot_command += fmt::format("{}{} index {} using 1:2 with {} lw 2 axes {} title {}",
                                gnuplot_index == 0 ? "" : ", \\\n     ",
                                detail::gnuplot_quote(data.string()), gnuplot_index, style,
                                s.right_axis ? "x1y2" : "x1y1", detail::gnuplot_quote(s.name));
    uses_right_axis = uses_right_axis || s.right_axis;
    ++gnuplot_index;
  }

  std::string script = detail::gnuplot_preamble(png, options.width, options.height);
  script += fmt::format(
      "set title {}\nset xlabel {}\nset ylabel {}\n", detail::gnuplot_quote(options.title),
      detail::gnuplot_quote(options.x_label), detail::gnuplot_quote(options.y_label));
  // The key goes above the plot, under the title, where it can never hide a curve.
  script += "set grid\nset key tmargin center horizontal\n";
  if (options.log_y) script += "set logscale y\n";
  if (options.y_min < options.y_max)
    script += fmt::format("set yrange [{}:{}]\n", options.y_min, options.y_max);
  if (uses_right_axis) {
    script += fmt::format("set ytics nomirror\nset y2tics\nset y2label {}\n",
                          detail::gnuplot_quote(options.y2_label));
  }
  script += plot_command + "\n";
  return detail::run_gnuplot(script, png, options.width, options.height, op);
}

}  // namespace attend::viz
