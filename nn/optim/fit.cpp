#include "nn/optim/fit.h"

#include <chrono>
#include <cmath>

#include "nn/optim/clip.h"
#include "tensor/error.h"

namespace attend::optim {

FitResult fit(Optimizer& optimizer, const FitOptions& options,
              const std::function<Tensor(Index step)>& loss_of_step,
              const std::function<void(Index step, double loss)>& after_step) {
  if (options.steps < 0) fail("fit: steps must not be negative, got {}", options.steps);
  if (options.clip_norm < 0) fail("fit: clip_norm must not be negative, got {}", options.clip_norm);
  const auto start = std::chrono::steady_clock::now();
  FitResult result;
  for (Index step = 1; step <= options.steps; ++step) {
    optimizer.zero_grad();
    Tensor loss = loss_of_step(step);
    if (loss.numel() != 1)
      fail("fit: the loss of step {} has shape {}, not one number", step, loss.shape());
    const double value = loss.item();
    check_loss_is_finite("fit", step, value);
    loss.backward();
    if (options.clip_norm > 0) clip_grad_norm(optimizer.parameters(), options.clip_norm);
    optimizer.step();
    result.steps = step;
    result.last_loss = value;
    if (after_step) after_step(step, value);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void check_loss_is_finite(std::string_view loop, Index step, double loss) {
  if (std::isfinite(loss)) return;
  fail(
      "{}: the loss of step {} is {}; training stopped there (usual causes: a learning rate too "
      "large, a log of 0, bad data in that step; backward() inside a DetectAnomalyGuard names "
      "the op whose gradient went wrong)",
      loop, step, std::isnan(loss) ? "NaN" : fmt::format("{}", loss));
}

}  // namespace attend::optim
