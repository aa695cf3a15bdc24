// Writes the tiny runs the browser tests load (tests/viewer/CMakeLists.txt), into argv[1]:
//
//   good/sequence/    2 layers x 3 heads (+ each layer's average) over 5 source and 4 target
//                     tokens; in every map output r looks at input (r + head + layer) % 5 with
//                     weight 0.9 + 0.02 r, so layer 2 head 3's strongest is output 3 -> input 1
//   good/image/       a 16 x 16 picture, methods "soft" and "hard", 3 steps each, a true box;
//                     a second example names the picture by a path (square.png beside it)
//   good/reading/part a map-reading run (lessons 08, 13, 14), a part of the folder good/reading:
//                     one 16 x 16 picture, 5 methods written in the order "zeta", "alpha", ...
//                     (not alphabetical), no steps, each with a pointing game hit and a mass in
//                     box of (k + 1) / 3 (shown as 0.333, 0.667, 1, 1.33, 1.67)
//   bad/malformed/    an attention_data.js cut off in the middle (not JavaScript any more)
//   bad/old_schema/   a document of schema "attend-attention/0"
//   bad/missing       listed in attend_runs.js, but its folder was never written
#include <filesystem>
#include <fstream>
#include <limits>

#include "attend.h"

using namespace attend;

namespace {

viz::AttentionRun sequence_run() {
  viz::AttentionRun run{.lesson = "viewer_test",
                        .title = "a tiny sequence run",
                        .kind = "sequence",
                        .seed = 7,
                        .flags = "--tiny"};
  viz::AttentionExample& e = run.examples.emplace_back();
  e.name = "abcde -> wxyz";
  e.source = {"a", "b", "c", "d", "e"};
  e.target = {"w", "x", "y", "z"};
  e.spans = {{.target_begin = 2, .target_end = 3, .source_begin = 4, .source_end = 5}};
  for (int layer = 0; layer < 2; ++layer) {
    for (int head = 0; head <= 3; ++head) {
      viz::AttentionMap m{.layer = layer};
      if (head < 3) m.head = head;
      for (int r = 0; r < 4; ++r) {
        const double peak = 0.9 + 0.02 * r;
        std::vector<double> row(5, (1 - peak) / 4);
        row[static_cast<std::size_t>((r + head + layer) % 5)] = peak;
        m.values.push_back(row);
      }
      e.maps.push_back(m);
    }
  }
  return run;
}

viz::AttentionRun image_run() {
  viz::AttentionRun run{.lesson = "viewer_test",
                        .title = "a tiny image run",
                        .kind = "image",
                        .seed = 7,
                        .flags = "--tiny"};
  viz::AttentionExample& e = run.examples.emplace_back();
  e.name = "a square";
  std::vector<double> pixels(3 * 16 * 16, 0.2);
  for (int y = 4; y < 12; ++y)
    for (int x = 4; x < 12; ++x) pixels[static_cast<std::size_t>(y * 16 + x)] = 0.9;
  e.image = viz::png_data_uri(NDArray::from_vector(std::span<const double>(pixels), {3, 16, 16}));
  e.image_width = e.image_height = 16;
  e.boxes = {{.x0 = 4, .y0 = 4, .x1 = 12, .y1 = 12, .label = "square"}};
  const char* words[2][3] = {{"a", "red", "square"}, {"a", "big", "box"}};
  for (int method = 0; method < 2; ++method)
    for (int step = 0; step < 3; ++step) {
      viz::AttentionMap m{
          .step = step, .method = method ? "hard" : "soft", .token = words[method][step]};
      m.values.assign(4, std::vector<double>(4, 0.01));
      m.values[static_cast<std::size_t>(step)][1] = 0.9;
      m.scores = {{"mass in box", 0.25 * step}};
      e.maps.push_back(m);
    }
  // The same picture as a PNG file beside the JSON, named by a relative path.
  viz::AttentionExample& beside = run.examples.emplace_back(e);
  beside.name = "a square, from a file";
  beside.image = "square.png";
  return run;
}

viz::AttentionRun reading_run() {
  viz::AttentionRun run{.lesson = "viewer_test",
                        .title = "a tiny map-reading run",
                        .kind = "image",
                        .seed = 7,
                        .flags = "--tiny"};
  std::vector<double> pixels(3 * 16 * 16, 0.2);
  const NDArray image = NDArray::from_vector(std::span<const double>(pixels), {3, 16, 16});
  viz::AttentionExample& e = run.examples.emplace_back(
      viz::image_example("a canvas", image, {data::Box{2, 2, 8, 8}}, "item"));
  const char* methods[] = {"zeta", "alpha", "rollout", "grad-cam", "random"};
  for (int k = 0; k < 5; ++k) {
    viz::AttentionMap m{.method = methods[k]};
    m.values.assign(4, std::vector<double>(4, 0.01));
    m.values[static_cast<std::size_t>(k % 4)][1] = 0.9;
    m.scores = {{"pointing game hit", k % 2}, {"mass in box", (k + 1) / 3.0}};
    e.maps.push_back(m);
  }
  return run;
}

// Strings and numbers that a careless JSON writer gets wrong: every ASCII character (NUL and
// the other controls included), quotes, backslashes, U+2028, "</script>", a character outside
// the BMP; a weight float32 cannot hold, float32's smallest, -0, the extremes of double, and
// the largest seed. tests/viewer/check_json.js checks each against its own copy of them.
viz::AttentionRun hostile_run() {
  viz::AttentionRun run{.lesson = "viewer_test",
                        .title = "hostile strings and numbers",
                        .kind = "sequence",
                        .seed = std::numeric_limits<std::uint64_t>::max(),
                        .flags = "--name \"x\""};
  viz::AttentionExample& e = run.examples.emplace_back();
  for (int c = 0; c < 128; ++c) e.name += static_cast<char>(c);
  e.name += "\u00e9\u2028\u2029\U0001F600</script>";
  e.source = {"\"", "\\", "\n", "\u2028"};
  e.target = {"t"};
  viz::AttentionMap m{.layer = 0};
  m.values = {{1e39, 1e-45, -0.0, 0.1}};
  m.scores = {{"tiny", 5e-324}, {"huge", 1.7976931348623157e308}, {"a \"quoted\"\nname", -1e-300}};
  e.maps.push_back(m);
  return run;
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_viewer_data FOLDER\n");
    return 2;
  }
  return app::run_program([&] {
    const std::filesystem::path dir = argv[1];
    std::filesystem::remove_all(dir);
    viz::write_attention_run(dir / "good/sequence", sequence_run());
    viz::write_attention_run(dir / "good/image", image_run());
    viz::write_attention_run(dir / "good/reading", reading_run(), "part");
    std::vector<double> gray(16 * 16, 0.5);
    viz::write_png(dir / "good/image/square.png",
                   NDArray::from_vector(std::span<const double>(gray), {1, 16, 16}));
    const viz::AttentionRun run = sequence_run();
    viz::write_attention_run(dir / "bad/malformed", run);
    const std::string text = "attendViewer.register(\"malformed\",\n" + viz::attention_json(run);
    write(dir / "bad/malformed/attention_data.js", text.substr(0, text.size() / 2));
    viz::write_attention_run(dir / "bad/old_schema", run);
    write(dir / "bad/old_schema/attention_data.js",
          "attendViewer.register(\"old_schema\", {\"schema\": \"attend-attention/0\"});\n");
    viz::write_attention_run(dir / "bad/missing", run);
    std::filesystem::remove_all(dir / "bad/missing");
    // strict/: the hostile run, added to a damaged attend_runs.js (a name with a quote, control
    // and invalid UTF-8 bytes, a line cut short, binary junk): the rewritten list must still
    // be a valid script (check_json.js).
    std::filesystem::create_directories(dir / "strict");
    write(dir / "strict/attend_runs.js",
          std::string("attendViewer.runs([\n  \"a\"b\",\n  \"\x01\xff\t\",\n  \"x\\\"\n  \"cut") +
              std::string("\0\x80\"\n", 4) + "]);\n");
    viz::write_attention_run(dir / "strict/hostile", hostile_run());
    // A page alone, without attend_runs.js.
    std::filesystem::create_directories(dir / "alone");
    write(dir / "alone/attend_viewer.html", std::string(viz::attention_viewer_page()));
    fmt::print("Wrote the viewer's test runs into {}\n", dir.string());
    return 0;
  });
}
