#include <cmath>
#include <sstream>

#include "nn/viz/progress.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// Options writing to `out`, in the given mode, with a clock the test sets by hand.
viz::ProgressOptions test_options(std::ostringstream& out, bool interactive, double& now) {
  viz::ProgressOptions options;
  options.out = &out;
  options.interactive = interactive;
  options.clock = [&now] { return now; };
  return options;
}

}  // namespace

TEST_CASE("viz: progress in a log prints plain lines every few seconds and at epoch end", "[viz]") {
  std::ostringstream out;
  double now = 0;
  viz::ProgressOptions options = test_options(out, false, now);
  options.epochs = 2;
  options.unit = "images";
  options.plain_seconds = 10;
  viz::Progress progress(4, options);

  progress.start_epoch();
  now = 1;
  progress.step(2.0, 8);  // 1 s after the start: too soon for a line
  CHECK(out.str().empty());
  now = 12;
  progress.step(1.0, 8);  // 12 s: a line. 16 images in 12 s; 6 s per step, 6 steps to go.
  now = 13;
  progress.step(0.5, 8);
  now = 14;
  progress.step(0.5, 8);               // only 2 s after the last line
  CHECK(progress.end_epoch() == 1.0);  // (2 + 1 + 0.5 + 0.5) / 4
  now = 20;
  progress.start_epoch();
  now = 25;
  progress.step(0.25, 10);
  now = 30;
  CHECK(progress.end_epoch() == 0.25);
  // Epoch 2: 5 steps done in 30 s of the run (the pause between epochs counts): 6 s per
  // step, 3 steps to go.
  CHECK(out.str() ==
        "epoch 1/2 | step 2/4 | loss 1.5000 | 1.33 images/s | 0:12 | ETA 0:36\n"
        "epoch 1/2 | step 4/4 | loss 1.0000 | 2.29 images/s | 0:14 | ETA 0:14\n"
        "epoch 2/2 | step 1/4 | loss 0.2500 | 1.00 images/s | 0:10 | ETA 0:18\n");
}

TEST_CASE("viz: progress in a terminal redraws one line in place", "[viz]") {
  std::ostringstream out;
  double now = 0;
  SECTION("redraws at most every redraw_seconds, then ends the line") {
    viz::Progress progress(3, [&] {
      viz::ProgressOptions o = test_options(out, true, now);
      o.epochs = 1;
      return o;
    }());
    progress.start_epoch();
    progress.step(10.0);  // drawn at once: no time has passed, so no speed or ETA yet
    now = 0.05;
    progress.step(2.0);  // within 0.1 s of the last drawing: skipped
    now = 0.4;
    progress.step(0.0);
    CHECK(progress.end_epoch() == 4.0);
    CHECK(out.str() ==
          "\repoch 1/1 | step 1/3 | loss 10.0000 | - items/s | 0:00 | ETA -"
          "\repoch 1/1 | step 3/3 | loss 4.0000 | 7.50 items/s | 0:00 | ETA 0:00"
          "\repoch 1/1 | step 3/3 | loss 4.0000 | 7.50 items/s | 0:00 | ETA 0:00\n");
  }
  SECTION("a shorter line erases the rest of the longer one; unknown totals show no /N") {
    viz::Progress progress(0, test_options(out, true, now));
    progress.start_epoch();
    now = 1;
    progress.step(100.0);
    now = 2;
    progress.step(0.0);
    progress.end_epoch();
    CHECK(out.str() ==
          "\repoch 1 | step 1 | loss 100.0000 | 1.00 items/s | 0:01"
          "\repoch 1 | step 2 | loss 50.0000 | 1.00 items/s | 0:02 "
          "\repoch 1 | step 2 | loss 50.0000 | 1.00 items/s | 0:02\n");
  }
}

TEST_CASE("viz: progress details", "[viz]") {
  CHECK(viz::format_duration(0) == "0:00");
  CHECK(viz::format_duration(65) == "1:05");
  CHECK(viz::format_duration(3725) == "1:02:05");
  CHECK(viz::format_duration(std::nan("")) == "-");

  std::ostringstream out;
  double now = 0;
  viz::Progress progress(10, test_options(out, false, now));
  // step() before start_epoch() starts epoch 1; a NaN loss shows as nan, not as a crash.
  progress.step(std::nan(""), 1000);  // at time 0: starts the epoch
  now = 2;
  progress.step(1.0, 1000);
  CHECK_THAT(progress.line(), Contains("epoch 1 | step 2/10 | loss nan | 1000 items/s | 0:02"));
  CHECK_THAT(error_message([&] { progress.step(1, -1); }), Contains("items must be >= 0"));
  CHECK_THAT(error_message([] { viz::Progress(-1); }), Contains("steps_per_epoch must be >= 0"));
  // An epoch without steps has no mean loss.
  progress.start_epoch();
  CHECK(std::isnan(progress.end_epoch()));
  // Given another stream and no mode, it writes plain lines: only a terminal gets '\r'.
  std::ostringstream log;
  viz::ProgressOptions plain;
  plain.out = &log;
  viz::Progress to_log(2, plain);
  to_log.step(1);
  to_log.end_epoch();
  CHECK(log.str().find('\r') == std::string::npos);
  CHECK_THAT(log.str(), Contains("step 1/2 | loss 1.0000"));
}
