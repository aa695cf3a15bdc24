// A metrics log: one CSV row per call, e.g. per epoch, that a spreadsheet, pandas or gnuplot
// can read, and that survives a crash (each row is flushed as soon as it is written).
//
//   viz::CsvLog log("out/metrics.csv", {"epoch", "train_loss", "val_loss", "val_accuracy"});
//   log.write({{"epoch", 3}, {"train_loss", 0.42}, {"val_accuracy", 0.87}});
//
// out/metrics.csv:
//   epoch,train_loss,val_loss,val_accuracy
//   3,0.42,,0.87
//
// A metric left out of a row is an empty cell; a name that is not a column is an error (a
// typo would otherwise vanish silently). Numbers are written in their shortest exact form,
// so they read back as the same double.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace attend::viz {

using Metrics = std::vector<std::pair<std::string, double>>;

class CsvLog {
 public:
  enum class Mode {
    kOverwrite,  // start a new file
    kAppend      // add to an existing log (a resumed run); its header must match
  };

  // Opens (creating missing folders) and writes the header, unless appending to a file that
  // already has it. Throws attend::Error if the file cannot be opened, the columns are empty
  // or repeated, or an existing file's header differs.
  CsvLog(std::filesystem::path path, std::vector<std::string> columns,
         Mode mode = Mode::kOverwrite);

  // One row of named values (any order, any subset of the columns).
  void write(const Metrics& values);
  // One row with a value for every column, in the columns' order.
  void write_values(const std::vector<double>& values);

  const std::filesystem::path& path() const { return path_; }
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  void write_row(const std::vector<std::string>& cells);

  std::filesystem::path path_;
  std::vector<std::string> columns_;
  std::ofstream out_;
};

// A CSV cell: quoted (with quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text);

}  // namespace attend::viz
