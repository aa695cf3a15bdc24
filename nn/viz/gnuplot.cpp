#include "nn/viz/gnuplot.h"

// gnuplot-iostream: class Gnuplot, an std::ostream whose other end is gnuplot's stdin.
#include <gnuplot-iostream.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "nn/viz/colormap.h"
#include "nn/viz/image.h"
#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {
namespace {

// set_gnuplot_disabled's setting; the environment variable can turn gnuplot off as well.
std::atomic<bool> disabled_by_call{false};
// The "no PNGs" warning is printed once per process (and again after set_gnuplot_disabled).
std::atomic<bool> warned{false};

bool disabled() {
  if (disabled_by_call.load()) return true;
  const char* value = std::getenv("ATTEND_NO_GNUPLOT");
  return value != nullptr && value[0] != '\0' && std::string_view(value) != "0";
}

// Looks for an executable named gnuplot in each folder of $PATH, as the shell would.
bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view folders(path);
  while (true) {
    const std::size_t colon = folders.find(':');
    std::string_view folder = folders.substr(0, colon);
    std::filesystem::path candidate =
        std::filesystem::path(folder.empty() ? "." : std::string(folder)) / "gnuplot";
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return true;
    }
    if (colon == std::string_view::npos) return false;
    folders.remove_prefix(colon + 1);
  }
}

void warn_once_unavailable() {
  if (warned.exchange(true)) return;
  if (disabled()) {
    std::cerr << "attend: gnuplot is turned off (ATTEND_NO_GNUPLOT or set_gnuplot_disabled), "
                 "so plots are written as data files (.txt) only, without PNGs.\n";
  } else {
    std::cerr << "attend: gnuplot was not found on the PATH, so plots are written as data "
                 "files (.txt) only, without PNGs. Install it with: "
                 "apt-get install --no-install-recommends gnuplot-nox\n";
  }
}

// While it lives, writing to a pipe whose reader has exited (gnuplot stopped at an error,
// or could not start) fails with an error code instead of killing the whole program with
// SIGPIPE. The previous handler is restored afterwards.
class SigpipeIgnored {
 public:
  SigpipeIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &previous_);
  }
  ~SigpipeIgnored() { sigaction(SIGPIPE, &previous_, nullptr); }
  SigpipeIgnored(const SigpipeIgnored&) = delete;
  SigpipeIgnored& operator=(const SigpipeIgnored&) = delete;

 private:
  struct sigaction previous_ {};
};

// True if path is a PNG of exactly width x height pixels that decodes completely.
bool is_png_of_size(const std::filesystem::path& path, int width, int height) {
  try {
    NDArray image = read_image(path, ColorMode::kRgb);
    return image.size(1) == height && image.size(2) == width;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

bool gnuplot_available() {
  return !disabled() && gnuplot_on_path();
}

void set_gnuplot_disabled(bool disable) {
  disabled_by_call.store(disable);
  warned.store(false);
}

namespace detail {

std::string gnuplot_quote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "''";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      quoted += ' ';  // a line break (or any control byte, say a NUL) would cut the command
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string gnuplot_tics(const std::vector<std::string>& labels) {
  std::string tics = "(";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    // gnuplot reads a tic label as a format for the tic's value: a '%' must be written "%%"
    // (a text with '%' in it, lesson 12's --text, drew "Bad format character" errors).
    std::string label;
    for (char c : labels[i]) label += c == '%' ? std::string("%%") : std::string(1, c);
    tics += fmt::format("{}{} {}", i == 0 ? "" : ", ", gnuplot_quote(label), i);
  }
  return tics + ")";
}

std::string gnuplot_number(double value) {
  return fmt::format("{}", value);
}

std::string gnuplot_preamble(const std::filesystem::path& png, int width, int height) {
  return fmt::format(
      "set terminal pngcairo size {},{} font 'DejaVu Sans,10'\n"
      "set output {}\n"
      "set termoption noenhanced\n"
      "{}",
      width, height, gnuplot_quote(png.string()), gnuplot_palette());
}

bool run_gnuplot(const std::string& script, const std::filesystem::path& png, int width, int height,
                 std::string_view op) {
  std::error_code error;
  std::filesystem::remove(png, error);  // no stale picture may pass for this one
  if (!gnuplot_available()) {
    warn_once_unavailable();
    return false;
  }
  make_parent_folders(png, op);
  {
    SigpipeIgnored sigpipe_ignored;
    try {
      // "gnuplot" and not the default "gnuplot -persist" ($GNUPLOT_IOSTREAM_CMD): no window.
      // Its standard output goes nowhere: when gnuplot cannot open the output file it draws
      // the PNG to stdout instead, which would print binary garbage on the terminal. Its
      // error messages (stderr) still reach the learner.
      Gnuplot gnuplot("gnuplot > /dev/null");
      gnuplot << script << "unset output\n";
      gnuplot.flush();
    } catch (const std::exception&) {
      // The pipe could not be opened or written: the check below reports it.
    }
    // Gnuplot's destructor closed the pipe and waited for gnuplot to exit, so the PNG, if
    // any, is complete now.
  }
  if (is_png_of_size(png, width, height)) return true;
  std::filesystem::remove(png, error);
  std::cerr << fmt::format(
      "attend: {}: gnuplot did not write a {}x{} PNG to '{}' (see its message above, if "
      "any); the data file was written.\n",
      op, width, height, png.string());
  return false;
}

}  // namespace detail
}  // namespace attend::viz
