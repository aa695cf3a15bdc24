// A progress line for training loops, on stderr:
//
//   epoch 2/10 | step 120/500 | loss 1.2345 | 812 items/s | 0:09 | ETA 4:05
//
// loss is the mean over the epoch's steps so far (a single batch's loss is too noisy to
// read), items/s counts the items (e.g. sentences or images) given to step(), the time is
// the epoch's so far, and ETA is the estimated time left for the whole run (for the epoch
// when the number of epochs is not given).
//
//   viz::Progress progress(batches_per_epoch, {.epochs = 10, .unit = "images"});
//   for (int epoch = 0; epoch < 10; ++epoch) {
//     progress.start_epoch();
//     for (...) { ...; progress.step(loss.item(), batch_size); }
//     double train_loss = progress.end_epoch();
//   }
//
// In a terminal the line is redrawn in place ('\r', at most 10 times a second); when stderr
// is a file or a pipe (CI logs, `| tee`) it prints a plain line every 10 seconds instead,
// and always the epoch's final line. step() only reads the clock unless it draws, so it is
// cheap enough to call on every step.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "tensor/shape.h"

namespace attend::viz {

struct ProgressOptions {
  int epochs = 0;              // total number of epochs; 0 if unknown (no "/N")
  std::string unit = "items";  // what step(loss, items) counts
  // Where the line goes; nullptr means std::cerr.
  std::ostream* out = nullptr;
  // Redraw in place? Unset: yes if out is std::cerr and stderr is a terminal.
  std::optional<bool> interactive;
  // The clock, in seconds. Unset: std::chrono::steady_clock. Tests pass a fake one.
  std::function<double()> clock;
  double redraw_seconds = 0.1;  // interactive: redraw at most this often
  double plain_seconds = 10;    // plain: a line at most this often
};

class Progress {
 public:
  // steps_per_epoch may be 0 if unknown (then no "/N" and no ETA).
  explicit Progress(Index steps_per_epoch, ProgressOptions options = {});

  // Starts the next epoch (the first is epoch 1): resets the step count, loss and timer.
  void start_epoch();
  // Records one step's loss and how many items it processed; draws the line when due.
  void step(double loss, Index items = 1);
  // Prints the epoch's final line (ending with a newline) and returns its mean loss.
  double end_epoch();

  // The line as it would be drawn now.
  std::string line() const;

 private:
  double now() const;
  void draw(bool final);

  Index steps_per_epoch_;
  ProgressOptions options_;
  std::ostream* out_;
  bool interactive_;
  int epoch_ = 0;
  Index step_ = 0, items_ = 0;
  double loss_sum_ = 0;
  double epoch_start_ = 0, run_start_ = 0, last_draw_ = 0, last_time_ = 0;
  Index steps_done_before_epoch_ = 0;  // all epochs' steps before this one, for the ETA
  std::size_t drawn_length_ = 0;       // for erasing a longer previous line in place
};

// Seconds as "m:ss", or "h:mm:ss" from an hour on.
std::string format_duration(double seconds);

}  // namespace attend::viz
