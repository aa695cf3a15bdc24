#include "nn/viz/csv_log.h"

#include <fmt/format.h>

#include <algorithm>

#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {
namespace {

std::string header_line(const std::vector<std::string>& columns) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i)
    line += (i == 0 ? "" : ",") + csv_cell(columns[i]);
  return line;
}

// The first line of an existing file, or "" if it is missing or empty.
std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

}  // namespace

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

CsvLog::CsvLog(std::filesystem::path path, std::vector<std::string> columns, Mode mode)
    : path_(std::move(path)), columns_(std::move(columns)) {
  if (columns_.empty()) fail("CsvLog: '{}': no columns", path_.string());
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (std::find(columns_.begin(), columns_.begin() + static_cast<std::ptrdiff_t>(i),
                  columns_[i]) != columns_.begin() + static_cast<std::ptrdiff_t>(i)) {
      fail("CsvLog: '{}': the column '{}' is listed twice", path_.string(), columns_[i]);
    }
  }
  const std::string header = header_line(columns_);
  bool write_header = true;
  if (mode == Mode::kAppend) {
    const std::string existing = first_line(path_);
    if (!existing.empty()) {
      if (existing != header) {
        fail("CsvLog: cannot append to '{}': its columns are '{}', not '{}'", path_.string(),
             existing, header);
      }
      write_header = false;  // the header is written once, by whoever created the file
    }
  }
  out_ = open_for_writing(path_, "CsvLog", mode == Mode::kAppend);
  if (write_header) {
    out_ << header << '\n';
    finish_writing(out_, path_, "CsvLog");
  }
}

void CsvLog::write(const Metrics& values) {
  std::vector<std::string> cells(columns_.size());
  std::vector<bool> given(columns_.size(), false);
  for (const auto& [name, value] : values) {
    const auto column = std::find(columns_.begin(), columns_.end(), name);
    if (column == columns_.end()) {
      fail("CsvLog::write: '{}' is not a column of '{}' (columns: {})", name, path_.string(),
           header_line(columns_));
    }
    const auto index = static_cast<std::size_t>(column - columns_.begin());
    if (given[index]) fail("CsvLog::write: '{}' is given twice in one row", name);
    given[index] = true;
    cells[index] = fmt::format("{}", value);
  }
  write_row(cells);
}

void CsvLog::write_values(const std::vector<double>& values) {
  if (values.size() != columns_.size()) {
    fail("CsvLog::write_values: {} values for the {} columns of '{}' ({})", values.size(),
         columns_.size(), path_.string(), header_line(columns_));
  }
  std::vector<std::string> cells;
  for (double v : values) cells.push_back(fmt::format("{}", v));
  write_row(cells);
}

void CsvLog::write_row(const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) out_ << (i == 0 ? "" : ",") << cells[i];
  out_ << '\n';
  finish_writing(out_, path_, "CsvLog");  // flushed now: a crash loses no finished row
}

}  // namespace attend::viz
