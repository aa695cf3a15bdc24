#include <cmath>
#include <limits>

#include "nn/viz/attention_json.h"
#include "scratch.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

viz::AttentionRun tiny_run() {
  viz::AttentionRun run{.lesson = "11_transformer",
                        .title = "dates",
                        .kind = "sequence",
                        .seed = 3,
                        .flags = "--heads 2"};
  viz::AttentionExample& e = run.examples.emplace_back();
  e.name = "3/1";
  e.source = {"3", "/", "1"};
  e.target = {"0", "1"};
  e.spans = {
      {.target_begin = 0, .target_end = 2, .source_begin = 2, .source_end = 3, .label = "month"}};
  e.maps.push_back({.layer = 0, .head = 1, .values = {{0.5, 0.25, 0.25}, {0, 0.1, 0.9}}});
  e.maps.push_back({.layer = 0, .label = "layer 1: average", .values = {{1, 0, 0}, {0, 0, 1}}});
  return run;
}

}  // namespace

TEST_CASE("viz: json_string escapes quotes, backslashes, control characters, U+2028", "[viz]") {
  CHECK(viz::json_string("plain") == "\"plain\"");
  CHECK(viz::json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(viz::json_string("line\nnext\ttab\r\b\f") == "\"line\\nnext\\ttab\\r\\b\\f\"");
  CHECK(viz::json_string(std::string("nul\0bell\x07", 9)) == "\"nul\\u0000bell\\u0007\"");
  CHECK(viz::json_string("</script>") == "\"</script>\"");  // legal in a script file
  // Other UTF-8 passes through; the two line separators are escaped for JavaScript.
  CHECK(viz::json_string("caf\xC3\xA9") == "\"caf\xC3\xA9\"");
  CHECK(viz::json_string("a\xE2\x80\xA8"
                         "b\xE2\x80\xA9") == "\"a\\u2028b\\u2029\"");
  CHECK(viz::json_string("\xE2\x80\x94") == "\"\xE2\x80\x94\"");  // an em dash is not one
}

TEST_CASE("viz: json_number is the shortest exact form and refuses NaN and infinities", "[viz]") {
  CHECK(viz::json_number(0.1, "x") == "0.1");
  CHECK(viz::json_number(-3, "x") == "-3");
  CHECK(viz::json_number(1e20, "x") == "1e+20");
  CHECK(viz::json_number(1.0 / 3, "x") == "0.3333333333333333");
  CHECK_THAT(error_message([] { viz::json_number(std::nan(""), "the loss"); }),
             Contains("the loss is nan"));
  CHECK_THAT(
      error_message([] { viz::json_number(-std::numeric_limits<double>::infinity(), "the loss"); }),
      Contains("the loss is -inf"));
}

TEST_CASE("viz: attention_json writes the schema, the run, tokens, spans and maps", "[viz]") {
  const std::string json = viz::attention_json(tiny_run());
  CHECK(json.starts_with("{\"schema\": \"attend-attention/1\",\n"));
  CHECK_THAT(json, Contains("\"run\": {\"lesson\": \"11_transformer\", \"title\": \"dates\", "
                            "\"kind\": \"sequence\", \"seed\": 3, \"flags\": \"--heads 2\"}"));
  CHECK_THAT(json, Contains("\"source\": [\"3\", \"/\", \"1\"]"));
  CHECK_THAT(json, Contains("\"spans\": [{\"target\": [0, 2], \"source\": [2, 3], "
                            "\"label\": \"month\"}]"));
  CHECK_THAT(json, Contains("{\"rows\": 2, \"cols\": 3, \"layer\": 0, \"head\": 1,\n"
                            "       \"values\": [[0.5, 0.25, 0.25],\n        [0, 0.1, 0.9]]}"));
  // The average has no head; float32 precision keeps 0.1 short.
  CHECK_THAT(json, Contains("\"layer\": 0, \"label\": \"layer 1: average\""));
  CHECK(json.ends_with("]}\n ]}\n"));
}

TEST_CASE("viz: a weight beyond float32's range is written as a number, never inf", "[viz]") {
  viz::AttentionRun run = tiny_run();
  run.examples[0].maps[0].values[0] = {1e39, -1e300, 1e-45};
  const std::string json = viz::attention_json(run);
  CHECK_THAT(json, Contains("\"values\": [[1e+39, -1e+300, 1e-45],"));
  CHECK_THAT(json, !Contains("inf"));
}

TEST_CASE("viz: attention_json names the example, map and cell of bad data", "[viz]") {
  viz::AttentionRun run = tiny_run();
  SECTION("a NaN weight") {
    run.examples[0].maps[0].values[1][2] = std::nan("");
    CHECK_THAT(error_message([&] { viz::attention_json(run); }),
               Contains("example 0 ('3/1') map 0 [1, 2] is nan"));
  }
  SECTION("a map whose shape is not target x source") {
    run.examples[0].maps[1].values = {{1, 0}, {0, 1}};
    CHECK_THAT(error_message([&] { viz::attention_json(run); }),
               Contains("map 1 is 2 x 2, but the example has 2 target and 3 source tokens"));
  }
  SECTION("ragged rows") {
    run.examples[0].maps[0].values[1].pop_back();
    CHECK_THAT(error_message([&] { viz::attention_json(run); }),
               Contains("row 1 has 2 values, row 0 has 3"));
  }
  SECTION("a span outside the tokens") {
    run.examples[0].spans[0].source_end = 4;
    CHECK_THAT(error_message([&] { viz::attention_json(run); }),
               Contains("span 0 (target [0, 2), source [2, 4)) is outside"));
  }
  SECTION("an unknown kind") {
    run.kind = "video";
    CHECK_THAT(error_message([&] { viz::attention_json(run); }),
               Contains("kind 'video' must be \"sequence\" or \"image\""));
  }
}

TEST_CASE("viz: write_attention_run writes the data, the script, the page and the index", "[viz]") {
  ScratchFolder dir("attention-run");
  viz::write_attention_run(dir / "11_transformer", tiny_run());
  viz::AttentionRun other = tiny_run();
  other.lesson = "07_bahdanau";
  viz::write_attention_run(dir / "07_bahdanau/", other);  // a trailing slash is the same folder
  viz::write_attention_run(dir / "11_transformer", tiny_run());  // listed once

  const std::string json = read_text(dir / "11_transformer/attention.json");
  CHECK(json == viz::attention_json(tiny_run()));
  CHECK(read_text(dir / "11_transformer/attention_data.js")
            .ends_with("attendViewer.register(\"11_transformer\",\n" + json + ");\n"));
  CHECK(read_text(dir / "attend_viewer.html") == viz::attention_viewer_page());
  CHECK_THAT(read_text(dir / "attend_runs.js"),
             Contains("attendViewer.runs([\n  \"07_bahdanau\",\n  \"11_transformer\",\n]);\n"));
}

TEST_CASE("viz: write_attention_run writes a lesson's second run as a part of its folder",
          "[viz]") {
  ScratchFolder dir("attention-part");
  viz::write_attention_run(dir / "13_reading_attention", tiny_run());
  viz::write_attention_run(dir / "13_reading_attention", tiny_run(), "images");

  const std::string json = read_text(dir / "13_reading_attention/images/attention.json");
  CHECK(json == viz::attention_json(tiny_run()));
  CHECK(read_text(dir / "13_reading_attention/images/attention_data.js")
            .ends_with("attendViewer.register(\"13_reading_attention/images\",\n" + json + ");\n"));
  CHECK_THAT(read_text(dir / "attend_runs.js"),
             Contains("[\n  \"13_reading_attention\",\n  \"13_reading_attention/images\",\n]"));
  for (const char* part : {"a/b", "..", "."})
    CHECK_THAT(error_message([&] { viz::write_attention_run(dir / "13", tiny_run(), part); }),
               Contains(fmt::format("the part '{}' of run '13' must be one folder name", part)));
}

TEST_CASE("viz: png_data_uri is a base64 PNG, the page is compiled in", "[viz]") {
  // A 1x1 gray image: the PNG signature \x89PNG\r\n\x1a\n is "iVBORw0KGgo" in base64.
  const std::string uri = viz::png_data_uri(f64({0.5}, {1, 1, 1}));
  CHECK(uri.starts_with("data:image/png;base64,iVBORw0KGgo"));
  CHECK(uri.size() % 4 == std::string("data:image/png;base64,").size() % 4);
  CHECK_THAT(error_message([] {
               viz::png_data_uri(f64({0.5, NAN}, {1, 1, 2}));
             }),
             Contains("encode_png"));
  CHECK_THAT(std::string(viz::attention_viewer_page()), Contains("attendViewer"));
  CHECK(viz::map_rows(f64({1, 2, 3, 4, 5, 6}, {2, 3})) ==
        std::vector<std::vector<double>>{{1, 2, 3}, {4, 5, 6}});
}

TEST_CASE("viz: image_example holds the picture, its size and the canvas's boxes", "[viz]") {
  const NDArray image = NDArray::full({3, 2, 5}, 0.5, kFloat64);  // 5 wide, 2 high
  const viz::AttentionExample e =
      viz::image_example("canvas 3", image, {data::Box{1, 0, 4, 2}}, "trouser");
  CHECK(e.name == "canvas 3");
  CHECK(e.image == viz::png_data_uri(image));
  CHECK(e.image_width == 5);
  CHECK(e.image_height == 2);
  REQUIRE(e.boxes.size() == 1);
  CHECK((e.boxes[0].x0 == 1 && e.boxes[0].y0 == 0 && e.boxes[0].x1 == 4 && e.boxes[0].y1 == 2));
  CHECK(e.boxes[0].label == "trouser");
  CHECK_THAT(error_message([&] {
               viz::image_example("flat", f64({0.5}, {1, 1}), {}, "");
             }),
             Contains("image_example: 'flat' needs an image [C, H, W], got [1,1]"));
}
