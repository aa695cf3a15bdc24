#include "nn/viz/output_file.h"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "tensor/error.h"

namespace attend::viz {

std::filesystem::path data_path_for(const std::filesystem::path& png) {
  std::filesystem::path data = png;
  data.replace_extension(".txt");
  return data;
}

void check_png_path(const std::filesystem::path& path, std::string_view op) {
  if (path.extension() != ".png" || path.stem().empty()) {
    fail("{}: the output file '{}' must end in .png", op, path.string());
  }
}

void make_parent_folders(const std::filesystem::path& path, std::string_view op) {
  std::filesystem::path parent = path.parent_path();
  if (parent.empty()) return;  // a bare file name: the current folder
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    fail("{}: cannot create the folder '{}' for '{}': {}", op, parent.string(), path.string(),
         error.message());
  }
}

std::ofstream open_for_writing(const std::filesystem::path& path, std::string_view op,
                               bool append) {
  make_parent_folders(path, op);
  errno = 0;
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out) {
    // std::ofstream does not say why; errno from the underlying open() usually does.
    const char* reason = errno != 0 ? std::strerror(errno) : "unknown reason";
    fail("{}: cannot open '{}' for writing: {}", op, path.string(), reason);
  }
  return out;
}

std::string number_text(double value, bool single_precision) {
  if (single_precision) return fmt::format("{}", static_cast<float>(value));
  return fmt::format("{}", value);
}

std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

void finish_writing(std::ofstream& out, const std::filesystem::path& path, std::string_view op) {
  out.flush();
  if (!out) fail("{}: writing '{}' failed (is the disk full?)", op, path.string());
}

}  // namespace attend::viz
