#include <cstdlib>
#include <iostream>
#include <sstream>

#include "nn/viz/curves.h"
#include "nn/viz/gnuplot.h"
#include "nn/viz/heatmap.h"
#include "nn/viz/image.h"
#include "scratch.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// The rows of numbers of a data file, block by block (blocks are separated by blank lines;
// comment lines start with '#').
using Rows = std::vector<std::vector<double>>;
std::vector<Rows> data_blocks(const std::filesystem::path& path) {
  std::vector<Rows> blocks(1);
  std::istringstream lines(read_text(path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      if (!blocks.back().empty()) blocks.emplace_back();
    } else if (line[0] != '#') {
      std::istringstream numbers(line);
      std::vector<double> row;
      double value;
      while (numbers >> value) row.push_back(value);
      INFO("line: " << line);
      CHECK(numbers.eof());  // the whole line was numbers
      blocks.back().push_back(row);
    }
  }
  if (blocks.back().empty()) blocks.pop_back();
  return blocks;
}

Rows matrix_rows(const NDArray& m) {
  Rows rows(static_cast<std::size_t>(m.size(0)));
  for (Index i = 0; i < m.size(0); ++i) {
    for (Index j = 0; j < m.size(1); ++j) rows[i].push_back(m.at({i, j}));
  }
  return rows;
}

// When gnuplot is installed the PNG must exist with exactly this size; without it the
// function must have said so by returning false and left no PNG behind.
void check_png(bool drawn, const std::filesystem::path& png, Index width, Index height) {
  if (!viz::gnuplot_available()) {
    WARN("gnuplot is not installed: the PNG part of this test is skipped");
    CHECK_FALSE(drawn);
    CHECK_FALSE(std::filesystem::exists(png));
    return;
  }
  REQUIRE(drawn);
  NDArray image = viz::read_image(png);
  CHECK(image.size(1) == height);
  CHECK(image.size(2) == width);
}

// Captures what is written to std::cerr while it lives.
class CaptureStderr {
 public:
  CaptureStderr() : previous_(std::cerr.rdbuf(captured_.rdbuf())) {}
  ~CaptureStderr() { std::cerr.rdbuf(previous_); }
  std::string text() const { return captured_.str(); }

 private:
  std::ostringstream captured_;
  std::streambuf* previous_;
};

// Turns gnuplot off for one test, and back on afterwards even if the test fails.
struct GnuplotTurnedOff {
  GnuplotTurnedOff() { viz::set_gnuplot_disabled(true); }
  ~GnuplotTurnedOff() { viz::set_gnuplot_disabled(false); }
};

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("viz: the curves data file holds exactly the given points", "[viz]") {
  ScratchFolder dir("curves");
  viz::Series train{"train loss"}, accuracy{"val accuracy"}, empty{"not yet"};
  train.add(1, 2.5);
  train.add(2, 1.25);
  train.add(3, 0.1);
  accuracy.add(1, 0.3);
  accuracy.add(3, 0.875);
  accuracy.right_axis = true;
  viz::CurveOptions options;
  options.title = "Loss & accuracy";
  options.x_label = "epoch";
  options.y_label = "loss";
  options.y2_label = "accuracy";
  options.width = 640;
  options.height = 400;
  const bool drawn = viz::plot_curves(dir / "curves.png", {train, empty, accuracy}, options);

  std::vector<Rows> blocks = data_blocks(dir / "curves.txt");
  REQUIRE(blocks.size() == 2);  // the empty series has a header but no rows
  CHECK(blocks[0] == Rows{{1, 2.5}, {2, 1.25}, {3, 0.1}});
  CHECK(blocks[1] == Rows{{1, 0.3}, {3, 0.875}});
  const std::string text = read_text(dir / "curves.txt");
  CHECK_THAT(text, Contains("# series 0: train loss\n"));
  CHECK_THAT(text, Contains("# series 1: not yet\n"));
  CHECK_THAT(text, Contains("# series 2: val accuracy (right axis)\n"));
  check_png(drawn, dir / "curves.png", 640, 400);
}

TEST_CASE("viz: the heatmap data file holds the matrix and its labels", "[viz]") {
  ScratchFolder dir("heatmap");
  NDArray weights = f64({0.1, 0.2, 0.3, 0.4, 0.7, 0.1, 0.1, 0.1, 0.0, 0.05, 0.9, 0.05}, {3, 4});
  // Labels gnuplot would mangle in its "enhanced" mode, and a quote that must be doubled.
  std::vector<std::string> queries = {"it's", "x_1^2", "{b}"};
  std::vector<std::string> keys = {"Fen@@", "ster", "sub_word", "<eos>"};
  const bool drawn =
      viz::plot_attention(dir / "align.png", weights, queries, keys, "it's attention");
  std::vector<Rows> blocks = data_blocks(dir / "align.txt");
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == matrix_rows(weights));
  const std::string text = read_text(dir / "align.txt");
  CHECK_THAT(text, Contains("# row 0: it's\n"));
  CHECK_THAT(text, Contains("# column 2: sub_word\n"));
  // The automatic size is at least 360 x 300; an explicit one is exact.
  if (drawn) CHECK(viz::read_image(dir / "align.png").size(2) >= 360);

  // float32 values are written as floats: 0.1, not 0.10000000149011612.
  {
    GnuplotTurnedOff off;  // only the data file matters here
    CaptureStderr quiet;
    CHECK_FALSE(viz::plot_heatmap(dir / "f32.png", NDArray::from_list({0.1, 0.25, 1e-8}, {1, 3})));
  }
  CHECK_THAT(read_text(dir / "f32.txt"), Contains("\n0.1 0.25 1e-08\n"));

  viz::HeatmapOptions options;
  options.width = 500;
  options.height = 420;
  options.show_values = true;
  check_png(viz::plot_heatmap(dir / "sized.png", weights, options), dir / "sized.png", 500, 420);
}

TEST_CASE("viz: a confusion matrix keeps its counts", "[viz]") {
  ScratchFolder dir("confusion");
  NDArray counts = ids({50, 2, 0, 3, 41, 7, 0, 12, 1234}, {3, 3});
  const bool drawn =
      viz::plot_confusion_matrix(dir / "confusion.png", counts, {"cat", "dog", "bird"}, "pets");
  std::vector<Rows> blocks = data_blocks(dir / "confusion.txt");
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == matrix_rows(counts));
  CHECK_THAT(read_text(dir / "confusion.txt"), Contains("# column 2: bird\n"));
  if (viz::gnuplot_available()) CHECK(drawn);
}

TEST_CASE("viz: a panel of heatmaps writes one block per panel", "[viz]") {
  ScratchFolder dir("panel");
  std::vector<viz::HeatmapPanel> heads;
  for (int h = 0; h < 3; ++h) {
    NDArray m = NDArray::empty({2, 3}, kFloat64);
    for (Index i = 0; i < 6; ++i) m.set({i / 3, i % 3}, (h + 1) * 0.1 + static_cast<double>(i) / 8);
    heads.push_back({"head " + std::to_string(h), m});
  }
  viz::PanelOptions options;
  options.heatmap.title = "layer 1";
  options.heatmap.row_labels = {"a", "b"};
  options.heatmap.column_labels = {"x", "y", "z"};
  options.heatmap.width = 300;
  options.heatmap.height = 250;
  options.columns = 2;
  const bool drawn = viz::plot_heatmap_panel(dir / "heads.png", heads, options);
  std::vector<Rows> blocks = data_blocks(dir / "heads.txt");
  REQUIRE(blocks.size() == 3);
  for (std::size_t h = 0; h < 3; ++h) CHECK(blocks[h] == matrix_rows(heads[h].matrix));
  CHECK_THAT(read_text(dir / "heads.txt"), Contains("# panel 2: head 2\n"));
  // 2 columns x 2 rows of 300 x 250 panels, plus 30 pixels for the title.
  check_png(drawn, dir / "heads.png", 600, 530);
}

TEST_CASE("viz: with gnuplot turned off, plots warn once, write data and return false", "[viz]") {
  ScratchFolder dir("no-gnuplot");
  GnuplotTurnedOff off;
  CHECK_FALSE(viz::gnuplot_available());
  // A stale picture from an earlier run must not survive as if it were the new one.
  write_bytes(dir / "loss.png", "old picture");
  viz::Series loss{"loss"};
  loss.add(0, 1);
  loss.add(1, 0.5);
  CaptureStderr captured;
  CHECK_FALSE(viz::plot_curves(dir / "loss.png", {loss}));
  CHECK_FALSE(viz::plot_heatmap(dir / "map.png", f64({1, 2, 3, 4}, {2, 2})));
  CHECK_FALSE(viz::plot_heatmap_panel(dir / "panel.png", {{"h", f64({1, 2}, {1, 2})}}));
  CHECK_FALSE(std::filesystem::exists(dir / "loss.png"));
  CHECK_FALSE(std::filesystem::exists(dir / "map.png"));
  CHECK_FALSE(std::filesystem::exists(dir / "panel.png"));
  CHECK(data_blocks(dir / "loss.txt") == std::vector<Rows>{Rows{{0, 1}, {1, 0.5}}});
  CHECK(data_blocks(dir / "map.txt") == std::vector<Rows>{Rows{{1, 2}, {3, 4}}});
  CHECK(data_blocks(dir / "panel.txt") == std::vector<Rows>{Rows{{1, 2}}});
  // Three plots, one warning, which says what happened and that the data is there.
  const std::string warning = captured.text();
  CHECK(count(warning, "attend: gnuplot") == 1);
  CHECK_THAT(warning, Contains("gnuplot is turned off"));
  CHECK_THAT(warning, Contains("data files (.txt) only, without PNGs"));
}

TEST_CASE("viz: ATTEND_NO_GNUPLOT and a PATH without gnuplot both mean no PNG", "[viz]") {
  ScratchFolder dir("no-gnuplot-env");
  viz::Series loss{"loss"};
  loss.add(0, 1);
  SECTION("the environment variable") {
    const char* before = std::getenv("ATTEND_NO_GNUPLOT");
    const std::string saved = before != nullptr ? before : "";
    ::setenv("ATTEND_NO_GNUPLOT", "1", 1);
    const bool with_1 = viz::gnuplot_available();
    ::setenv("ATTEND_NO_GNUPLOT", "0", 1);  // "0" does not turn it off
    const bool with_0 = viz::gnuplot_available();
    ::unsetenv("ATTEND_NO_GNUPLOT");
    const bool unset = viz::gnuplot_available();
    if (before != nullptr) ::setenv("ATTEND_NO_GNUPLOT", saved.c_str(), 1);
    CHECK_FALSE(with_1);
    CHECK(with_0 == unset);
  }
  SECTION("gnuplot not installed: the real missing-program path, without SIGPIPE") {
    const std::string saved_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
    ::setenv("PATH", (dir.path() / "empty-bin").c_str(), 1);
    CaptureStderr captured;
    const bool available = viz::gnuplot_available();
    // Many points, so that writing them to a gnuplot that never started would raise SIGPIPE.
    viz::Series many{"many"};
    for (int i = 0; i < 20000; ++i) many.add(i, 1.0 / (1 + i));
    const bool drawn = viz::plot_curves(dir / "many.png", {many});
    ::setenv("PATH", saved_path.c_str(), 1);
    CHECK_FALSE(available);
    CHECK_FALSE(drawn);
    CHECK_FALSE(std::filesystem::exists(dir / "many.png"));
    CHECK(data_blocks(dir / "many.txt").at(0).size() == 20000);
    CHECK_THAT(captured.text(), Contains("gnuplot was not found on the PATH"));
    CHECK_THAT(captured.text(), Contains("apt-get install --no-install-recommends gnuplot-nox"));
  }
}

TEST_CASE("viz: when gnuplot fails, the plot returns false and says so", "[viz]") {
  if (!viz::gnuplot_available()) {
    WARN("gnuplot is not installed: nothing to test here");
    return;
  }
  ScratchFolder dir("gnuplot-fails");
  // gnuplot cannot write its PNG where a (non-empty) folder of that name stands.
  std::filesystem::create_directories(dir / "taken.png");
  write_bytes(dir / "taken.png/keep", "x");
  viz::Series loss{"loss"};
  loss.add(0, 1);
  loss.add(1, 0.5);
  CaptureStderr captured;
  CHECK_FALSE(viz::plot_curves(dir / "taken.png", {loss}));
  CHECK_THAT(captured.text(), Contains("plot_curves: gnuplot did not write a 800x500 PNG"));
  CHECK(data_blocks(dir / "taken.txt") == std::vector<Rows>{Rows{{0, 1}, {1, 0.5}}});
}

TEST_CASE("viz: labels reach gnuplot literally, in single quotes", "[viz]") {
  using viz::detail::gnuplot_quote;
  CHECK(gnuplot_quote("it's") == "'it''s'");
  CHECK(gnuplot_quote("a\\b \"c\" x_1^2 {b} @@") == "'a\\b \"c\" x_1^2 {b} @@'");
  CHECK(gnuplot_quote("two\nlines") == "'two lines'");
  CHECK(viz::detail::gnuplot_tics({"the", "cat's"}) == "('the' 0, 'cat''s' 1)");
  // A tic label is a format for its value in gnuplot: '%' doubled; control bytes blanked.
  CHECK(viz::detail::gnuplot_tics({"5%", std::string("a\0b\x1b", 4)}) == "('5%%' 0, 'a b ' 1)");
  CHECK(viz::detail::gnuplot_number(0.1) == "0.1");
  const std::string preamble = viz::detail::gnuplot_preamble("out/it's.png", 300, 200);
  CHECK_THAT(preamble, Contains("set terminal pngcairo size 300,200"));
  CHECK_THAT(preamble, Contains("set output 'out/it''s.png'\n"));
  CHECK_THAT(preamble, Contains("set termoption noenhanced\n"));
}

TEST_CASE("viz: plots reject bad input with one clear error", "[viz]") {
  ScratchFolder dir("plot-errors");
  viz::Series loss{"loss", {1, 2}, {0.5}};
  CHECK_THAT(error_message([&] { viz::plot_curves(dir / "a.png", {loss}); }),
             Contains("series 'loss' has 2 x values but 1 y values"));
  CHECK_THAT(error_message([&] { viz::plot_curves(dir / "a.png", {viz::Series{"empty"}}); }),
             Contains("no series has any points"));
  CHECK_THAT(error_message([&] { viz::plot_curves(dir / "a.svg", {}); }),
             Contains("'") && Contains("a.svg' must end in .png"));
  NDArray m = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THAT(error_message([&] {
               viz::plot_attention(dir / "a.png", m, {"a"}, {"x", "y", "z"});
             }),
             Contains("1 row labels for 2 rows"));
  CHECK_THAT(error_message([&] {
               viz::plot_heatmap(dir / "a.png", f64({1, 2}, {2}));
             }),
             Contains("non-empty 2-D matrix, not [2]"));
  NDArray with_inf = m.clone();
  with_inf.set({1, 0}, INFINITY);
  CHECK_THAT(error_message([&] { viz::plot_heatmap(dir / "a.png", with_inf); }),
             Contains("non-finite value (inf) at row 1, column 0"));
  CHECK_THAT(error_message([&] { viz::plot_heatmap_panel(dir / "a.png", {}); }),
             Contains("no panels"));
  viz::HeatmapOptions backwards;
  backwards.min_value = 2;
  backwards.max_value = 1;
  CHECK_THAT(error_message([&] { viz::plot_heatmap(dir / "a.png", m, backwards); }),
             Contains("colour range [2, 1] is not a range"));
  // Nothing was written for any of them.
  CHECK(std::filesystem::is_empty(dir.path()));
}
