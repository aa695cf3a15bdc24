// Learning-rate schedules: functions from a step number to a learning rate.
//
// A schedule is called with the index of the step about to be taken, 0 for the first
// step, and returns the learning rate for it. apply_schedule() sets it on an optimizer:
//
//   optim::AdamW adamw(model.parameters(), {.lr = 3e-4});
//   // 100 steps of warmup to 3e-4, then a cosine decay to 3e-5 over the remaining 900
//   optim::Schedule schedule =
//       optim::LinearWarmup(3e-4, 100, optim::CosineAnnealing(3e-4, 900, 3e-5));
//   for (int step = 0; step < 1000; ++step) {
//     optim::apply_schedule(adamw, schedule);  // lr = schedule(adamw.steps_taken())
//     adamw.zero_grad();
//     loss(...).backward();
//     adamw.step();
//   }
//
// Because the step number comes from the optimizer's steps_taken(), which a checkpoint
// restores, a resumed run continues its schedule where it stopped.
#pragma once

#include <cstdint>
#include <functional>

#include "nn/optim/optimizer.h"

namespace attend::optim {

using Schedule = std::function<double(std::int64_t step)>;

// PyTorch's StepLR: decay by gamma every step_size steps.
//   lr(step) = base_lr * gamma^floor(step / step_size)
class StepLR {
 public:
  StepLR(double base_lr, std::int64_t step_size, double gamma = 0.1);
  double operator()(std::int64_t step) const;

 private:
  double base_lr_;
  std::int64_t step_size_;
  double gamma_;
};

// Half a cosine from base_lr down to min_lr over total_steps (Loshchilov & Hutter 2017,
// SGDR, eq. 5, without restarts; PyTorch's CosineAnnealingLR with T_max = total_steps):
//   lr(step) = min_lr + (base_lr - min_lr) * (1 + cos(pi * step / total_steps)) / 2
// for step <= total_steps, and min_lr after that (PyTorch's closed form would instead
// follow the cosine back up).
class CosineAnnealing {
 public:
  CosineAnnealing(double base_lr, std::int64_t total_steps, double min_lr = 0);
  double operator()(std::int64_t step) const;

 private:
  double base_lr_;
  std::int64_t total_steps_;
  double min_lr_;
};

// A linear ramp up to base_lr over the first warmup_steps steps, then `after` (by default
// base_lr for ever). Warmup keeps Adam's first updates small while its second-moment
// estimate is still noisy; transformers are trained with it (Vaswani et al. 2017, eq. 3).
//   lr(step) = base_lr * (step + 1) / warmup_steps      for step < warmup_steps
//   lr(step) = after(step - warmup_steps)               after that
// The ramp starts at base_lr / warmup_steps (not 0, which would waste the first step) and
// reaches base_lr on the last warmup step. `after` counts its steps from the end of the
// warmup, so for warmup then cosine over `total` steps in all, give it
// CosineAnnealing(base_lr, total - warmup_steps).
class LinearWarmup {
 public:
  LinearWarmup(double base_lr, std::int64_t warmup_steps, Schedule after = {});
  double operator()(std::int64_t step) const;

 private:
  double base_lr_;
  std::int64_t warmup_steps_;
  Schedule after_;
};

// The Transformer's schedule (Vaswani et al. 2017, eq. 3; "Noam" after Noam Shazeer, as
// the Annotated Transformer and tensor2tensor call it):
//   lr = factor * d_model^-0.5 * min(n^-0.5, n * warmup_steps^-1.5),   n = step + 1
// The paper counts steps from 1; a schedule here is called with 0 for the first step, hence
// n = step + 1. It rises linearly to its peak factor * (d_model * warmup_steps)^-0.5 at
// n = warmup_steps (the same ramp as LinearWarmup to that peak), then decays as n^-0.5.
// The paper used factor 1, d_model 512, warmup 4000 (a peak of 7.0e-4) with Adam(0.9, 0.98).
class NoamSchedule {
 public:
  NoamSchedule(Index d_model, std::int64_t warmup_steps, double factor = 1.0);
  double operator()(std::int64_t step) const;

 private:
  double scale_;  // factor * d_model^-0.5
  double warmup_;
};

// Sets the learning rate of the optimizer's next step: schedule(optimizer.steps_taken()).
// Call it before each step(). Returns the learning rate it set.
double apply_schedule(Optimizer& optimizer, const Schedule& schedule);

}  // namespace attend::optim
