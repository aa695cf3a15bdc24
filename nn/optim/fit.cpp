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
    if (!std::isfinite(value))
      fail(
          "fit: the loss of step {} is {}; the model stopped learning there (look at the learning "
          "rate, the data of that step, or a log of 0)",
          step, std::isnan(value) ? "NaN" : fmt::format("{}", value));
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

}  // namespace attend::optim
