// A training run in a transcript and a plot.
#include "seq/training_report.h"

#include "nn/viz/viz.h"

namespace attend::seq {

void report_training(app::Transcript& t, const TrainingResult& r, const std::string& png,
                     const std::string& title, const std::string& score) {
  for (int e = 0; e < r.epochs; ++e)
    t.say("  epoch {:2}  train loss {:.4f}  validation {} {:.1f}%\n", e + 1,
          r.train_loss[static_cast<std::size_t>(e)], score,
          100 * r.validation_score[static_cast<std::size_t>(e)]);
  t.say("{} steps in {:.1f} s ({}).\n", r.steps, r.seconds,
        r.reached_target ? "reached the validation target"
        : r.out_of_time  ? "stopped by the time budget"
                         : "all epochs done");
  viz::Series loss{"train loss (mean per token)"}, accuracy{"validation " + score};
  accuracy.right_axis = true;
  for (int e = 0; e < r.epochs; ++e) {
    loss.add(e + 1, r.train_loss[static_cast<std::size_t>(e)]);
    accuracy.add(e + 1, r.validation_score[static_cast<std::size_t>(e)]);
  }
  viz::plot_curves(
      png, {loss, accuracy},
      {.title = title, .x_label = "epoch", .y_label = "cross-entropy", .y2_label = score});
}

}  // namespace attend::seq
