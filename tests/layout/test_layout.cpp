// The shape of the code base, checked: the folders are the architecture, and a lesson stands
// on the library alone.
//
//   tensor/ <- autograd/ <- nn/ <- interpret/ <- seq/ and vision/ <- lessons/NN_name/
//   app/ (flags, transcript, clock) needs only tensor/error.h; seq/, vision/ and lessons may
//   use it. seq/ and vision/ stand side by side: neither includes the other.
//
// A lesson includes "attend.h" and its own folder's headers, never another lesson's, never an
// internal header; every lesson's main.cpp reads like its chapter (at most 250 lines), no
// function anywhere in the library or the lessons is longer than 80 lines, and no chapter is
// longer than 650 lines.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The tree to check: this source tree, or another checkout named by ATTEND_LAYOUT_ROOT.
fs::path source_root() {
  const char* other = std::getenv("ATTEND_LAYOUT_ROOT");
  return other != nullptr && *other != '\0' ? fs::path(other) : fs::path(ATTEND_SOURCE_DIR);
}
const fs::path kRoot = source_root();

// Which project folders each library folder may include from (besides itself).
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"tensor", {}},
    {"autograd", {"tensor"}},
    {"nn", {"tensor", "autograd"}},
    {"app", {"tensor"}},
    {"interpret", {"tensor", "autograd", "nn"}},
    {"seq", {"tensor", "autograd", "nn", "app", "interpret"}},
    {"vision", {"tensor", "autograd", "nn", "app", "interpret"}},
};
const std::set<std::string> kProjectFolders = {"tensor", "autograd", "nn",      "app",  "interpret",
                                               "seq",    "vision",   "lessons", "tests"};

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

bool is_source(const fs::path& path) {
  return path.extension() == ".h" || path.extension() == ".cpp";
}

// Every .h and .cpp below `folder` (recursively), sorted.
std::vector<fs::path> sources_below(const fs::path& folder) {
  std::vector<fs::path> files;
  if (!fs::exists(folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && is_source(entry.path())) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The quoted includes of a file: {line number, path}.
std::vector<std::pair<int, std::string>> quoted_includes(const fs::path& file) {
  static const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<std::pair<int, std::string>> found;
  std::vector<std::string> lines = read_lines(file);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, include)) found.push_back({int(i) + 1, m[1].str()});
  }
  return found;
}

std::string first_component(const std::string& path) {
  return path.substr(0, path.find('/'));
}

std::string shown(const fs::path& path) {
  return fs::relative(path, kRoot).string();
}

std::vector<fs::path> lesson_folders() {
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(kRoot / "lessons"))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  return folders;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& p : problems) text += p + "\n";
  return text;
}

// A line with its comments, string and character literals blanked out, so that braces
// inside them are not counted. `in_comment` carries a /* comment */ across lines.
std::string code_only(const std::string& line, bool& in_comment) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (in_comment) {
      if (line.compare(i, 2, "*/") == 0) {
        in_comment = false;
        ++i;
      }
      continue;
    }
    if (line.compare(i, 2, "//") == 0) break;
    if (line.compare(i, 2, "/*") == 0) {
      in_comment = true;
      ++i;
      continue;
    }
    if (line[i] == '"' || line[i] == '\'') {
      char quote = line[i];
      for (++i; i < line.size() && line[i] != quote; ++i)
        if (line[i] == '\\') ++i;
      out += "_";
      continue;
    }
    out += line[i];
  }
  return out;
}

struct LongFunction {
  int first_line = 0, lines = 0;
  std::string signature;
};

// Functions defined at namespace level (the project's style puts them at column 0): the
// lines from the start of the signature to the closing brace. Bodies of classes, structs,
// enums and initialisers are not functions; a namespace's braces do not count as depth.
std::vector<LongFunction> functions_of(const fs::path& file) {
  static const std::regex namespace_block(R"(\bnamespace\b)");
  static const std::regex not_function(R"(\b(class|struct|enum|union)\b|=\s*\{?$)");
  std::vector<std::string> lines = read_lines(file);
  std::vector<LongFunction> functions;
  std::vector<bool> open;  // per open brace: does it open a namespace?
  bool in_comment = false;
  int depth = 0, start = -1;  // depth: open braces other than namespaces'
  bool in_function = false;
  std::string statement;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& raw = lines[i];
    std::string code = code_only(raw, in_comment);
    bool at_top = depth == 0 && !raw.empty() && raw[0] != ' ' && raw[0] != '#' && raw[0] != '}';
    if (at_top && start < 0 && code.find_first_not_of(" \t") != std::string::npos) {
      start = int(i);
      statement.clear();
    }
    for (char c : code) {
      if (start >= 0 && !in_function) statement += c;
      if (c == '{') {
        bool is_namespace = depth == 0 && std::regex_search(statement, namespace_block);
        if (depth == 0 && start >= 0 && !in_function && !is_namespace) {
          in_function = statement.find('(') != std::string::npos &&
                        !std::regex_search(statement, not_function);
          if (!in_function) start = -1;
        }
        if (is_namespace) start = -1;
        open.push_back(is_namespace);
        if (!is_namespace) ++depth;
      } else if (c == '}' && !open.empty()) {
        bool closes_namespace = open.back();
        open.pop_back();
        if (!closes_namespace) --depth;
        if (in_function && depth == 0) {
          functions.push_back({start + 1, int(i) - start + 1, lines[std::size_t(start)]});
          in_function = false;
          start = -1;
        }
      } else if (c == ';' && depth == 0 && !in_function) {
        start = -1;  // a declaration, not a definition
      }
    }
  }
  return functions;
}

}  // namespace

TEST_CASE("a lesson includes only attend.h and its own folder's headers", "[layout]") {
  std::vector<std::string> problems;
  for (const fs::path& folder : lesson_folders())
    for (const fs::path& file : sources_below(folder))
      for (const auto& [line, included] : quoted_includes(file)) {
        bool own = fs::exists(folder / included) ||
                   (included.rfind("lessons/", 0) == 0 && fs::exists(kRoot / included) &&
                    fs::canonical(kRoot / included).parent_path() == fs::canonical(folder));
        if (included != "attend.h" && !own)
          problems.push_back(fmt::format("{}:{}: includes \"{}\"", shown(file), line, included));
      }
  INFO(joined(problems));
  CHECK(problems.empty());
}

TEST_CASE("no lesson's build links another lesson", "[layout]") {
  static const std::regex lesson_target(R"(\blesson_([0-9][0-9]_[a-z0-9_]+))");
  std::vector<std::string> problems;
  for (const fs::path& folder : lesson_folders()) {
    if (!fs::exists(folder / "CMakeLists.txt")) continue;
    std::string own = folder.filename().string();
    std::vector<std::string> lines = read_lines(folder / "CMakeLists.txt");
    for (std::size_t i = 0; i < lines.size(); ++i)
      for (std::sregex_iterator m(lines[i].begin(), lines[i].end(), lesson_target), end; m != end;
           ++m)
        if ((*m)[1].str() != own)
          problems.push_back(fmt::format("{}:{}: names lesson_{}", shown(folder / "CMakeLists.txt"),
                                         i + 1, (*m)[1].str()));
  }
  INFO(joined(problems));
  CHECK(problems.empty());
}

TEST_CASE("each library folder includes only the folders below it", "[layout]") {
  std::vector<std::string> problems;
  for (const auto& [folder, allowed] : kMayInclude)
    for (const fs::path& file : sources_below(kRoot / folder))
      for (const auto& [line, included] : quoted_includes(file)) {
        std::string top = first_component(included);
        if (included.find('/') == std::string::npos || !kProjectFolders.count(top)) continue;
        if (top != folder && !allowed.count(top))
          problems.push_back(
              fmt::format("{}:{}: {}/ includes \"{}\"", shown(file), line, folder, included));
      }
  INFO(joined(problems));
  CHECK(problems.empty());
}

TEST_CASE("every lesson's main.cpp is at most 250 lines", "[layout]") {
  std::vector<std::string> problems;
  for (const fs::path& folder : lesson_folders())
    if (fs::exists(folder / "main.cpp")) {
      std::size_t lines = read_lines(folder / "main.cpp").size();
      if (lines > 250)
        problems.push_back(fmt::format("{}: {} lines", shown(folder / "main.cpp"), lines));
    }
  INFO(joined(problems));
  CHECK(problems.empty());
}

// A chapter is read next to its program in one sitting: at most 650 lines; how a design was
// chosen is its short closing section, longer studies go to bench/README.md or an appendix.
TEST_CASE("every chapter docs/NN_name.md is at most 650 lines", "[layout]") {
  std::vector<std::string> problems;
  std::size_t chapters = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kRoot / "docs")) {
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, std::regex("[0-9][0-9]_.*\\.md"))) continue;
    ++chapters;
    const std::size_t lines = read_lines(entry.path()).size();
    if (lines > 650) problems.push_back(fmt::format("{}: {} lines", shown(entry.path()), lines));
  }
  INFO(joined(problems));
  CHECK(chapters >= 14);  // the check read the chapters, not an empty folder
  CHECK(problems.empty());
}

TEST_CASE("no function in the library or the lessons is longer than 80 lines", "[layout]") {
  std::vector<std::string> problems;
  for (const char* folder :
       {"tensor", "autograd", "nn", "app", "interpret", "seq", "vision", "lessons"})
    for (const fs::path& file : sources_below(kRoot / folder))
      for (const LongFunction& f : functions_of(file))
        if (f.lines > 80)
          problems.push_back(
              fmt::format("{}:{}: {} lines: {}", shown(file), f.first_line, f.lines, f.signature));
  INFO(joined(problems));
  CHECK(problems.empty());
}

TEST_CASE("the function-length check finds a function's lines", "[layout]") {
  // The checker itself, on a file written here: a 3-line function, a struct and a namespace.
  fs::path file = fs::temp_directory_path() / "attend_layout_probe.cpp";
  std::ofstream(file) << "namespace a {\n"
                         "struct S {\n  int f() { return 1; }\n};\n"
                         "int g(int x,\n      int y) {\n  return x + y;  // }\n}\n"
                         "const char* s = \"{\";\n"
                         "}  // namespace a\n";
  std::vector<LongFunction> found = functions_of(file);
  REQUIRE(found.size() == 1);
  CHECK(found[0].first_line == 5);
  CHECK(found[0].lines == 4);
  fs::remove(file);
}
