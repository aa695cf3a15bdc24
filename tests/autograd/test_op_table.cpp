// docs/ops.md lists every differentiable op: where its forward and backward are, its
// derivative, and the gradcheck test case that covers it. These tests keep that table
// true. They read the library's sources, find every op (an op is made by make_op("name",
// ...), the only way a node with an op enters the graph) and compare with the table, so
// an op added without a row, a row left behind by a removed op, and an op without a
// [gradcheck] test case each fail a test here.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = ATTEND_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The code without its comments (an example in a comment is not an op); string literals,
// where "//" may appear, are kept whole. Newlines stay, so positions keep their line.
std::string without_comments(const std::string& code) {
  std::string out;
  out.reserve(code.size());
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '"' || code[i] == '\'') {  // copy the literal, escapes included
      const char quote = code[i];
      out += code[i++];
      while (i < code.size() && code[i] != quote) {
        if (code[i] == '\\') out += code[i++];
        if (i < code.size()) out += code[i++];
      }
      if (i < code.size()) out += code[i];
    } else if (code.compare(i, 2, "//") == 0) {
      while (i < code.size() && code[i] != '\n') ++i;
      if (i < code.size()) out += '\n';
    } else if (code.compare(i, 2, "/*") == 0) {
      std::size_t end = code.find("*/", i + 2);
      end = end == std::string::npos ? code.size() : end + 2;
      for (; i < end; ++i)
        if (code[i] == '\n') out += '\n';
      --i;
    } else {
      out += code[i];
    }
  }
  return out;
}

std::string code_of(const std::string& relative) {
  return without_comments(read_text(kRoot / relative));
}

struct OpsInSources {
  std::map<std::string, std::set<std::string>> files;  // op -> files that make it
  std::vector<std::string> problems;                   // ops that the table could not list by name
};

// Every make_op call in the library's folders. The call's first argument must be the op's
// name as a string literal; only make_op's own declaration and definition (and the
// overload that forwards to the other) pass a variable.
OpsInSources ops_in_sources() {
  OpsInSources found;
  const std::regex call(R"re(\bmake_op\s*\(\s*("([^"]*)")?)re");
  const std::regex new_node(R"(make_shared<\s*Node\s*>)");
  for (const char* folder : {"tensor", "autograd", "nn", "app", "seq", "interpret", "vision"}) {
    if (!fs::exists(kRoot / folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      const std::string file = fs::relative(entry.path(), kRoot).generic_string();
      const std::string code = without_comments(read_text(entry.path()));
      const bool defines_make_op = file == "autograd/tensor.h" || file == "autograd/tensor.cpp";
      for (std::sregex_iterator m(code.begin(), code.end(), call), end; m != end; ++m) {
        if ((*m)[1].matched)
          found.files[(*m)[2].str()].insert(file);
        else if (!defines_make_op)
          found.problems.push_back(file + ": make_op called without a literal op name");
      }
      if (file != "autograd/tensor.cpp" && std::regex_search(code, new_node))
        found.problems.push_back(file + ": makes a Node itself instead of calling make_op");
    }
  }
  return found;
}

struct Row {
  std::string op, forward, backward, derivative, test;
};

// The cells of a Markdown table row ("\|" is a pipe inside a cell).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return out;
}

// The words of a cell between backquotes (or another quote character), in order.
std::vector<std::string> between(const std::string& cell, char quote = '`') {
  std::vector<std::string> words;
  for (std::size_t at = cell.find(quote); at != std::string::npos;) {
    std::size_t end = cell.find(quote, at + 1);
    if (end == std::string::npos) break;
    words.push_back(cell.substr(at + 1, end - at - 1));
    at = cell.find(quote, end + 1);
  }
  return words;
}

// The rows of the table that starts with "| op |" in docs/ops.md.
std::vector<Row> table_rows() {
  std::istringstream doc(read_text(kRoot / "docs/ops.md"));
  std::vector<Row> rows;
  bool inside = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("| op |", 0) == 0) {
      inside = true;
    } else if (inside && line.rfind("|---", 0) != 0) {
      if (line.rfind("|", 0) != 0) break;  // the table ended
      std::vector<std::string> c = cells(line);
      std::vector<std::string> name = between(c.at(0));
      rows.push_back({name.empty() ? "" : name[0], c.at(1), c.at(2), c.at(3), c.at(4)});
    }
  }
  return rows;
}

bool has_function(const std::string& code, const std::string& name) {
  return std::regex_search(code, std::regex("\\b" + name + "\\s*(<[^>(]*>)?\\s*\\("));
}

// The functions a location cell names (`file` `function()` ...), each checked in the last
// file named before it, or in `file` when the cell names none.
void check_location(const std::string& op, const std::string& cell, std::string file) {
  for (const std::string& word : between(cell)) {
    if (word.find('/') != std::string::npos) {
      file = word;
      INFO("op " << op << ": docs/ops.md names the file " << file);
      REQUIRE(fs::exists(kRoot / file));
    } else if (word.size() > 2 && word.ends_with("()")) {
      INFO("op " << op << ": docs/ops.md names " << word << " in " << file);
      CHECK(has_function(code_of(file), word.substr(0, word.size() - 2)));
    }
  }
}

}  // namespace

TEST_CASE("docs/ops.md lists every op made with make_op and no other", "[autograd]") {
  const OpsInSources sources = ops_in_sources();
  for (const std::string& problem : sources.problems) {
    INFO(problem);
    CHECK(false);
  }
  REQUIRE(sources.files.size() >= 40);  // the scan itself works
  std::set<std::string> listed;
  for (const Row& row : table_rows()) {
    INFO("docs/ops.md lists '" << row.op << "' twice");
    CHECK(listed.insert(row.op).second);
  }
  for (const auto& [op, files] : sources.files) {
    INFO("op '" << op << "' (made in " << *files.begin() << ") has no row in docs/ops.md");
    CHECK(listed.count(op) == 1);
  }
  for (const std::string& op : listed) {
    INFO("docs/ops.md lists '" << op << "', but no make_op(\"" << op << "\", ...) makes it");
    CHECK(sources.files.count(op) == 1);
  }
}

TEST_CASE("each op's forward and backward are where docs/ops.md says", "[autograd]") {
  const OpsInSources sources = ops_in_sources();
  for (const Row& row : table_rows()) {
    const std::vector<std::string> forward = between(row.forward);
    INFO("op " << row.op << ": the forward cell names a file and a function");
    REQUIRE(forward.size() >= 2);
    const std::string& file = forward[0];
    INFO("op " << row.op << ": make_op(\"" << row.op << "\", ...) is in " << file);
    CHECK(sources.files.count(row.op) == 1);
    if (sources.files.count(row.op)) CHECK(sources.files.at(row.op).count(file) == 1);
    check_location(row.op, row.forward, file);
    check_location(row.op, row.backward, file);
    CHECK_FALSE(row.derivative.find_first_not_of(' ') == std::string::npos);
  }
}

TEST_CASE("each op in docs/ops.md names an existing gradcheck test case", "[autograd]") {
  std::set<std::string> seen;
  for (const Row& row : table_rows()) {
    const std::vector<std::string> file = between(row.test), name = between(row.test, '"');
    INFO("op " << row.op << ": the gradcheck cell names a test file and a test case");
    REQUIRE(file.size() == 1);
    REQUIRE(name.size() == 1);
    INFO("op " << row.op << ": " << file[0] << " has TEST_CASE(\"" << name[0]
               << "\", \"...[gradcheck]...\") that names \"" << row.op << "\"");
    REQUIRE(fs::exists(kRoot / file[0]));
    const std::string code = code_of(file[0]);
    std::smatch found;
    const std::regex test_case("TEST_CASE\\(\\s*\"" + name[0] +
                               "\"\\s*,\\s*\"[^\"]*\\[gradcheck\\]");
    REQUIRE(std::regex_search(code, found, test_case));
    const std::size_t begin = found.position(0), end = code.find("TEST_CASE(", begin + 1);
    CHECK(code.substr(begin, end - begin).find('"' + row.op + '"') != std::string::npos);
    CHECK(seen.insert(name[0]).second);  // one test case per op
  }
}
