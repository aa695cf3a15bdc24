#include "nn/viz/attention_json.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "nn/viz/image.h"
#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else if (c == 0xE2 && i + 2 < text.size() && text[i + 1] == '\x80' &&
                   (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
          // U+2028 and U+2029 are legal in JSON strings but ended a JavaScript string
          // literal before ES2019; attention_data.js is JavaScript.
          out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value, std::string_view what) {
  if (!std::isfinite(value)) fail("attention_json: {} is {}; JSON has no such number", what, value);
  return fmt::format("{}", value);
}

namespace {

// Map values at float32 precision: the weights are float32 in the models, and
// "0.1" reads better than the "0.10000000149011612" of its conversion to double. A value
// beyond float32's range (an unnormalised map) is written as the double it is: as a float it
// would be "inf", which is not JSON.
std::string weight_text(double value, const std::string& where) {
  if (!std::isfinite(value))
    fail("attention_json: {} is {}; JSON has no such number", where, value);
  const auto single = static_cast<float>(value);
  return std::isfinite(single) ? fmt::format("{}", single) : fmt::format("{}", value);
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_string(items[i]);
  return out + "]";
}

// `"key": value` pairs of the axes a map has.
void add_axis(std::string& out, const char* key, const std::optional<int>& value) {
  if (value) out += fmt::format(", \"{}\": {}", key, *value);
}
void add_text(std::string& out, const char* key, const std::string& value) {
  if (!value.empty()) out += fmt::format(", \"{}\": {}", key, json_string(value));
}

std::string map_json(const AttentionMap& m, const std::string& where) {
  if (m.values.empty() || m.values[0].empty()) fail("attention_json: {} has no values", where);
  std::string out = "{";
  out += fmt::format("\"rows\": {}, \"cols\": {}", m.values.size(), m.values[0].size());
  add_axis(out, "layer", m.layer);
  add_axis(out, "head", m.head);
  add_axis(out, "step", m.step);
  add_text(out, "method", m.method);
  add_text(out, "label", m.label);
  add_text(out, "token", m.token);
  if (!m.scores.empty()) {
    out += ", \"scores\": {";
    for (std::size_t i = 0; i < m.scores.size(); ++i)
      out += fmt::format("{}{}: {}", i ? ", " : "", json_string(m.scores[i].first),
                         json_number(m.scores[i].second, where + " score " + m.scores[i].first));
    out += "}";
  }
  out += ",\n       \"values\": [";
  for (std::size_t r = 0; r < m.values.size(); ++r) {
    if (m.values[r].size() != m.values[0].size())
      fail("attention_json: {}: row {} has {} values, row 0 has {}", where, r, m.values[r].size(),
           m.values[0].size());
    out += r ? ",\n        [" : "[";
    for (std::size_t c = 0; c < m.values[r].size(); ++c)
      out += (c ? ", " : "") + weight_text(m.values[r][c], fmt::format("{} [{}, {}]", where, r, c));
    out += "]";
  }
  return out + "]}";
}

void check_map_shape(const AttentionRun& run, const AttentionExample& e, const AttentionMap& m,
                     const std::string& where) {
  if (run.kind != "sequence" || m.values.empty()) return;
  if ((!e.target.empty() && m.values.size() != e.target.size()) ||
      (!e.source.empty() && m.values[0].size() != e.source.size()))
    fail("attention_json: {} is {} x {}, but the example has {} target and {} source tokens", where,
         m.values.size(), m.values[0].size(), e.target.size(), e.source.size());
}

std::string truth_json(const AttentionExample& e, const std::string& where) {
  std::string out;
  if (!e.spans.empty()) {
    out += ",\n   \"spans\": [";
    for (std::size_t i = 0; i < e.spans.size(); ++i) {
      const AttentionSpan& s = e.spans[i];
      if (s.target_begin < 0 || s.target_begin > s.target_end || s.source_begin < 0 ||
          s.source_begin > s.source_end ||
          static_cast<std::size_t>(s.target_end) > e.target.size() ||
          static_cast<std::size_t>(s.source_end) > e.source.size())
        fail(
            "attention_json: {} span {} (target [{}, {}), source [{}, {})) is outside its {} "
            "target and {} source tokens",
            where, i, s.target_begin, s.target_end, s.source_begin, s.source_end, e.target.size(),
            e.source.size());
      out += fmt::format("{}{{\"target\": [{}, {}], \"source\": [{}, {}]", i ? ", " : "",
                         s.target_begin, s.target_end, s.source_begin, s.source_end);
      add_text(out, "label", s.label);
      out += "}";
    }
    out += "]";
  }
  if (!e.boxes.empty()) {
    out += ",\n   \"boxes\": [";
    for (std::size_t i = 0; i < e.boxes.size(); ++i) {
      const AttentionBox& b = e.boxes[i];
      const std::string w = fmt::format("{} box {}", where, i);
      out += fmt::format("{}{{\"x0\": {}, \"y0\": {}, \"x1\": {}, \"y1\": {}", i ? ", " : "",
                         json_number(b.x0, w), json_number(b.y0, w), json_number(b.x1, w),
                         json_number(b.y1, w));
      add_text(out, "label", b.label);
      out += "}";
    }
    out += "]";
  }
  return out;
}

std::string example_json(const AttentionRun& run, const AttentionExample& e, std::size_t index) {
  const std::string where = fmt::format("example {} ('{}')", index, e.name);
  std::string out = fmt::format("  {{\"name\": {}", json_string(e.name));
  out += ",\n   \"source\": " + string_list(e.source);
  out += ",\n   \"target\": " + string_list(e.target);
  if (!e.image.empty())
    out += fmt::format(",\n   \"image\": {{\"src\": {}, \"width\": {}, \"height\": {}}}",
                       json_string(e.image), e.image_width, e.image_height);
  out += truth_json(e, where);
  out += ",\n   \"maps\": [";
  for (std::size_t i = 0; i < e.maps.size(); ++i) {
    const std::string map_where = fmt::format("{} map {}", where, i);
    check_map_shape(run, e, e.maps[i], map_where);
    out += (i ? ",\n      " : "\n      ") + map_json(e.maps[i], map_where);
  }
  return out + "]}";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes text to path through a temporary file and a rename, so that a page (or a second
// lesson) reading it never sees half a file.
void write_whole(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::path temporary = path;
  temporary += fmt::format(".{}.tmp", ::getpid());
  std::ofstream out = open_for_writing(temporary, "write_attention_run");
  out << text;
  finish_writing(out, temporary, "write_attention_run");
  out.close();
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
    fail("write_attention_run: cannot rename '{}' to '{}': {}", temporary.string(), path.string(),
         error.message());
}

// The runs listed in an attend_runs.js: its lines "  \"name\",".
std::set<std::string> listed_runs(const std::filesystem::path& index) {
  std::set<std::string> runs;
  const std::string text = read_file(index);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    const std::size_t open = line.find('"'), close = line.rfind('"');
    if (line.starts_with("  \"") && close > open)
      runs.emplace(line.substr(open + 1, close - open - 1));
    start = end + 1;
  }
  return runs;
}

}  // namespace

std::string attention_json(const AttentionRun& run) {
  if (run.kind != "sequence" && run.kind != "image")
    fail("attention_json: kind '{}' must be \"sequence\" or \"image\"", run.kind);
  std::string out = "{\"schema\": \"attend-attention/1\",\n";
  out += fmt::format(
      " \"run\": {{\"lesson\": {}, \"title\": {}, \"kind\": {}, \"seed\": {}, \"flags\": {}}},\n",
      json_string(run.lesson), json_string(run.title), json_string(run.kind), run.seed,
      json_string(run.flags));
  out += " \"examples\": [\n";
  for (std::size_t i = 0; i < run.examples.size(); ++i)
    out += (i ? ",\n" : "") + example_json(run, run.examples[i], i);
  return out + "\n ]}\n";
}

std::filesystem::path write_attention_run(const std::filesystem::path& folder,
                                          const AttentionRun& run, std::string_view part) {
  const std::string json = attention_json(run);
  std::string name = folder.filename().empty() ? folder.parent_path().filename().string()
                                               : folder.filename().string();
  if (name.find_first_of("\"\\\n") != std::string::npos)
    fail("write_attention_run: the folder name '{}' cannot hold quotes or backslashes", name);
  if (!part.empty() && (part == "." || part == ".." || part.find_first_of("/\"\\\n") != part.npos))
    fail("write_attention_run: the part '{}' of run '{}' must be one folder name", part, name);
  const std::filesystem::path files = part.empty() ? folder : folder / part;
  if (!part.empty()) name += "/" + std::string(part);  // the page loads <name>/attention_data.js
  write_whole(files / "attention.json", json);
  write_whole(files / "attention_data.js",
              fmt::format("// {} for attend_viewer.html (schema in docs/viewer.md).\n"
                          "attendViewer.register({},\n{});\n",
                          name, json_string(name), json));
  // Beside the run's folder: the page, and the list of the runs it offers.
  const std::filesystem::path parent =
      std::filesystem::absolute(folder / "").parent_path().parent_path();
  write_whole(parent / "attend_viewer.html", attention_viewer_page());
  // Two lessons run at once (the tests do) must not both read the old list and each write it
  // back with only their own run added: the list is read and written under a lock.
  const std::filesystem::path lock_path = parent / ".attend_runs.lock";
  struct Lock {
    int fd;
    ~Lock() {
      if (fd >= 0) ::close(fd);  // closing releases the lock
    }
  } lock{::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)};
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX) != 0)
    fail("write_attention_run: cannot lock '{}': {}", lock_path.string(), std::strerror(errno));
  std::set<std::string> runs = listed_runs(parent / "attend_runs.js");
  runs.insert(name);
  std::string index =
      "// The runs in this folder that attend_viewer.html offers (the lessons add their own).\n"
      "attendViewer.runs([\n";
  for (const std::string& r : runs) index += "  " + json_string(r) + ",\n";
  write_whole(parent / "attend_runs.js", index + "]);\n");
  // The page as the caller named the folder: "output/11_transformer" -> "output/...html".
  return (folder / "").parent_path().parent_path() / "attend_viewer.html";
}

std::string png_data_uri(const NDArray& image) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string bytes = encode_png(image);
  std::string out = "data:image/png;base64,";
  for (std::size_t i = 0; i < bytes.size(); i += 3) {  // 3 bytes -> 4 digits of 6 bits
    std::uint32_t chunk = 0;
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    for (std::size_t k = 0; k < 3; ++k)
      chunk = (chunk << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(chunk >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

AttentionBox attention_box(const data::Box& box, std::string label) {
  return {.x0 = static_cast<double>(box.x0),
          .y0 = static_cast<double>(box.y0),
          .x1 = static_cast<double>(box.x1),
          .y1 = static_cast<double>(box.y1),
          .label = std::move(label)};
}

AttentionExample image_example(std::string name, const NDArray& image,
                               const std::vector<data::Box>& boxes, const std::string& label) {
  if (image.ndim() != 3)
    fail("image_example: '{}' needs an image [C, H, W], got {}", name, image.shape());
  AttentionExample e{.name = std::move(name),
                     .image = png_data_uri(image),
                     .image_width = image.size(2),
                     .image_height = image.size(1)};
  for (const data::Box& b : boxes) e.boxes.push_back(attention_box(b, label));
  return e;
}

std::vector<std::vector<double>> map_rows(const NDArray& matrix) {
  if (matrix.ndim() != 2 || !is_floating(matrix.dtype()))
    fail("map_rows: needs a float matrix [R, C], got {} {}", dtype_name(matrix.dtype()),
         matrix.shape());
  const std::vector<double> values = matrix.to_vector();  // any strides, any float dtype
  const auto columns = static_cast<std::ptrdiff_t>(matrix.size(1));
  std::vector<std::vector<double>> rows;
  for (auto row = values.begin(); row != values.end(); row += columns)
    rows.emplace_back(row, row + columns);
  return rows;
}

}  // namespace attend::viz
