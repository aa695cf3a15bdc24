// fit: the training loop any model can use, written once. Each step takes the loss of one
// minibatch, runs backward(), clips the gradients' global norm if asked, and lets the
// optimizer update the parameters; then `after_step` sees the step and its loss (to log,
// evaluate or change the learning rate).
//
//   optim::Adam adam(model.parameters(), {.lr = 1e-2});
//   optim::fit(adam, {.steps = 2000, .clip_norm = 1.0},
//              [&](Index) { Batch b = make_batch(gen); return mse_loss(model(b.x), b.y); },
//              [&](Index step, double loss) { if (step % 100 == 0) log(step, loss); });
//
// A non-finite loss stops the loop at once with an attend::Error naming the step and the
// loss: a NaN that reaches the parameters would spoil every later step silently.
#pragma once

#include <functional>
#include <string_view>

#include "autograd/tensor.h"
#include "nn/optim/optimizer.h"

namespace attend::optim {

struct FitOptions {
  Index steps = 1000;    // minibatches
  double clip_norm = 0;  // clip_grad_norm's max_norm before every step; 0: no clipping
};

struct FitResult {
  Index steps = 0;       // steps taken
  double last_loss = 0;  // the loss of the last step
  double seconds = 0;    // wall-clock time of the loop, after_step included
};

// loss_of_step(step) returns the scalar loss of step `step` (1, 2, ..., steps) with its graph.
FitResult fit(Optimizer& optimizer, const FitOptions& options,
              const std::function<Tensor(Index step)>& loss_of_step,
              const std::function<void(Index step, double loss)>& after_step = {});

// What fit does with every loss, for the training loops that are written out: an
// attend::Error if `loss` is NaN or infinite, naming the loop, the step and the loss, with
// the usual causes and how to find the op that went wrong (DetectAnomalyGuard).
void check_loss_is_finite(std::string_view loop, Index step, double loss);

}  // namespace attend::optim
