#include "nn/viz/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "tensor/error.h"

namespace attend::viz {
namespace {

std::string format_rate(double per_second) {
  if (per_second >= 100) return fmt::format("{:.0f}", per_second);
  if (per_second >= 10) return fmt::format("{:.1f}", per_second);
  return fmt::format("{:.2f}", per_second);
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, secs);
  return fmt::format("{}:{:02}", minutes, secs);
}

Progress::Progress(Index steps_per_epoch, ProgressOptions options)
    : steps_per_epoch_(steps_per_epoch), options_(std::move(options)) {
  if (steps_per_epoch_ < 0)
    fail("Progress: steps_per_epoch must be >= 0, not {}", steps_per_epoch_);
  if (options_.epochs < 0) fail("Progress: epochs must be >= 0, not {}", options_.epochs);
  out_ = options_.out != nullptr ? options_.out : &std::cerr;
  // Only a real terminal understands '\r' as "back to the start of the line"; in a log file
  // every redraw would pile up on one enormous line.
  interactive_ = options_.interactive.value_or(options_.out == nullptr && ::isatty(STDERR_FILENO));
}

double Progress::now() const {
  if (options_.clock) return options_.clock();
  using Seconds = std::chrono::duration<double>;
  return Seconds(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Progress::start_epoch() {
  if (epoch_ == 0) {
    run_start_ = now();
  } else {
    steps_done_before_epoch_ += step_;
  }
  ++epoch_;
  step_ = 0;
  items_ = 0;
  loss_sum_ = 0;
  epoch_start_ = now();
  last_time_ = epoch_start_;
  // A terminal shows the line from the first step on; a log gets its first line only after
  // plain_seconds, so short epochs print just their final line.
  last_draw_ = interactive_ ? -std::numeric_limits<double>::infinity() : epoch_start_;
}

void Progress::step(double loss, Index items) {
  if (items < 0) fail("Progress::step: items must be >= 0, not {}", items);
  if (epoch_ == 0) start_epoch();
  ++step_;
  items_ += items;
  loss_sum_ += loss;
  last_time_ = now();
  const double interval = interactive_ ? options_.redraw_seconds : options_.plain_seconds;
  if (last_time_ - last_draw_ >= interval) {
    draw(false);
    last_draw_ = last_time_;
  }
}

double Progress::end_epoch() {
  if (epoch_ == 0) start_epoch();
  last_time_ = now();
  draw(true);
  return step_ > 0 ? loss_sum_ / static_cast<double>(step_)
                   : std::numeric_limits<double>::quiet_NaN();
}

std::string Progress::line() const {
  const double elapsed = last_time_ - epoch_start_;
  std::string text = options_.epochs > 0 ? fmt::format("epoch {}/{}", epoch_, options_.epochs)
                                         : fmt::format("epoch {}", epoch_);
  text += steps_per_epoch_ > 0 ? fmt::format(" | step {}/{}", step_, steps_per_epoch_)
                               : fmt::format(" | step {}", step_);
  text += step_ > 0 ? fmt::format(" | loss {:.4f}", loss_sum_ / static_cast<double>(step_))
                    : std::string(" | loss -");
  text += elapsed > 0
              ? fmt::format(" | {} {}/s", format_rate(static_cast<double>(items_) / elapsed),
                            options_.unit)
              : fmt::format(" | - {}/s", options_.unit);
  text += " | " + format_duration(elapsed);
  if (steps_per_epoch_ > 0) {
    // Seconds per step over the whole run so far (time between epochs, e.g. validation,
    // included: it recurs), times the steps still to come.
    const Index done = steps_done_before_epoch_ + step_;
    const int epochs_after = options_.epochs > 0 ? std::max(0, options_.epochs - epoch_) : 0;
    const Index left =
        std::max<Index>(0, steps_per_epoch_ - step_) + epochs_after * steps_per_epoch_;
    const double run_elapsed = last_time_ - run_start_;
    text += done > 0 && run_elapsed > 0
                ? " | ETA " + format_duration(run_elapsed / static_cast<double>(done) *
                                              static_cast<double>(left))
                : std::string(" | ETA -");
  }
  return text;
}

void Progress::draw(bool final) {
  const std::string text = line();
  std::ostream& out = *out_;
  if (interactive_) {
    // Back to the start of the line; spaces erase what a longer previous line left behind.
    out << '\r' << text;
    if (text.size() < drawn_length_) out << std::string(drawn_length_ - text.size(), ' ');
    drawn_length_ = final ? 0 : text.size();
    if (final) out << '\n';
  } else {
    out << text << '\n';
  }
  out.flush();
}

}  // namespace attend::viz
