// Attention maps as data, for the interactive viewer (docs/viewer.md): one JSON document per
// lesson run, schema "attend-attention/1", that the page nn/viz/attend_viewer.html draws.
//
//   viz::AttentionRun run{.lesson = "11_transformer", .title = "dates", .kind = "sequence",
//                         .seed = 0, .flags = "--heads 4"};
//   viz::AttentionExample& e = run.examples.emplace_back();
//   e.source = {"3", "/", "1"};  e.target = {"2", "0"};
//   e.maps.push_back({.layer = 0, .head = 1, .values = {{0.9, 0.1, 0}, {0, 0.2, 0.8}}});
//   viz::write_attention_run("output/11_transformer", run);
//
// writes output/11_transformer/attention.json (the data), attention_data.js (the same data
// as a script the page loads: browsers refuse fetch() of file:// URLs, not <script src>), and
// beside the run's folder output/attend_viewer.html and output/attend_runs.js (the runs the
// page lists). Open output/attend_viewer.html in a browser: no server, nothing downloaded.
//
// The JSON is written by hand (no dependency): strings escaped per RFC 8259, numbers in their
// shortest exact form; a NaN or infinite value is an error naming the map and the cell.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nn/data/canvas.h"
#include "tensor/ndarray.h"

namespace attend::viz {

// One map: rows x cols weights. A sequence map's rows are the target (output) tokens and its
// columns the source tokens; an image map is a grid over the whole picture (row 0 at the top).
// The axes a map does not have stay empty (a layer's head average has no head).
struct AttentionMap {
  std::optional<int> layer{}, head{}, step{};  // 0-based
  std::string method{};                        // e.g. "soft", "hard", "grad-cam"; empty: none
  std::string label{};                         // what the page names it, e.g. "layer 1: average"
  std::string token{};                         // image maps: the word generated at this step
  std::vector<std::vector<double>> values{};
  std::vector<std::pair<std::string, double>> scores{};  // e.g. {"pointing game hit", 1}
};

// Ground truth. A span: the target tokens [target_begin, target_end) come from the source
// tokens [source_begin, source_end). A box: pixels [x0, x1) x [y0, y1) of the image.
struct AttentionSpan {
  int target_begin = 0, target_end = 0, source_begin = 0, source_end = 0;
  std::string label{};
};
struct AttentionBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::string label{};
};

struct AttentionExample {
  std::string name{};
  std::vector<std::string> source{}, target{};  // tokens (an image example may have a caption)
  std::string image{};  // image examples: a PNG path relative to the JSON, or a data: URI
  std::int64_t image_width = 0, image_height = 0;
  std::vector<AttentionSpan> spans{};
  std::vector<AttentionBox> boxes{};
  std::vector<AttentionMap> maps{};
};

struct AttentionRun {
  std::string lesson{};  // the program, e.g. "11_transformer"
  std::string title{};   // one line on what the maps are
  std::string kind{};    // "sequence" or "image": which view draws it
  std::uint64_t seed = 0;
  std::string flags{};  // the flags that matter to the maps, as a learner would type them
  std::vector<AttentionExample> examples{};
};

// text as a JSON string literal, quotes included: '"', '\\' and control characters escaped
// (\n, \t, ... or \u00XX), and U+2028/U+2029 as \u2028/\u2029 so the text is also a valid
// JavaScript literal. Other UTF-8 passes through unchanged.
std::string json_string(std::string_view text);
// value as a JSON number in its shortest exact form. NaN and infinities (which JSON cannot
// hold) throw attend::Error naming what.
std::string json_number(double value, std::string_view what);

// The run as one JSON document (schema "attend-attention/1"). Throws attend::Error naming the
// example and map if a kind, a map or a span is malformed or a value is not finite.
std::string attention_json(const AttentionRun& run);

// Writes folder/attention.json and folder/attention_data.js; then, in folder's parent,
// attend_viewer.html and attend_runs.js (adding folder's name to the runs already listed).
// Returns the page's path (folder/../attend_viewer.html, without the "..").
//
// A lesson with a second run (lesson 13's images beside its dates) names it by a part: the
// files go into folder/part/ and the run is listed as "<folder's name>/<part>" beside the
// lesson's other runs, in the same page. part is one folder name (no '/', not "." or "..").
std::filesystem::path write_attention_run(const std::filesystem::path& folder,
                                          const AttentionRun& run, std::string_view part = {});

// An image [C, H, W] (C = 1 or 3, values in [0, 1]) as a "data:image/png;base64,..." URI: the
// picture inside the JSON, so a file dropped on the page needs nothing beside it.
std::string png_data_uri(const NDArray& image);

// A canvas's box (nn/data, integer pixels) as the viewer's truth.
AttentionBox attention_box(const data::Box& box, std::string label);

// An image example with nothing but its picture and truth: the image [C, H, W] (values in
// [0, 1]) inside the JSON (png_data_uri), its size, and the boxes of a canvas (nn/data), each
// labelled `label`. The caller adds the maps (and a caption in target, if any).
AttentionExample image_example(std::string name, const NDArray& image,
                               const std::vector<data::Box>& boxes, const std::string& label);

// The viewer page, compiled into the library from nn/viz/attend_viewer.html.
std::string_view attention_viewer_page();

// Rows of a 2-D array [R, C] (any float dtype) as the values of a map.
std::vector<std::vector<double>> map_rows(const NDArray& matrix);

}  // namespace attend::viz
