#include "nn/optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attend::optim {
namespace {

void check_base_lr(double lr, std::string_view op, std::string_view what = "base_lr") {
  if (!(lr >= 0) || !std::isfinite(lr))
    fail("{}: {} must be finite and >= 0, got {}", op, what, lr);
}

void check_step(std::int64_t step, std::string_view op) {
  if (step < 0) fail("{}: the step must be >= 0, got {}", op, step);
}

}  // namespace

StepLR::StepLR(double base_lr, std::int64_t step_size, double gamma)
    : base_lr_(base_lr), step_size_(step_size), gamma_(gamma) {
  check_base_lr(base_lr, "StepLR");
  if (step_size < 1) fail("StepLR: step_size must be >= 1, got {}", step_size);
  if (!(gamma >= 0) || !std::isfinite(gamma))
    fail("StepLR: gamma must be finite and >= 0, got {}", gamma);
}

double StepLR::operator()(std::int64_t step) const {
  check_step(step, "StepLR");
  const std::int64_t decays = step / step_size_;  // integer division: the floor
  return base_lr_ * std::pow(gamma_, static_cast<double>(decays));
}

CosineAnnealing::CosineAnnealing(double base_lr, std::int64_t total_steps, double min_lr)
    : base_lr_(base_lr), total_steps_(total_steps), min_lr_(min_lr) {
  check_base_lr(base_lr, "CosineAnnealing");
  check_base_lr(min_lr, "CosineAnnealing", "min_lr");
  if (total_steps < 1) fail("CosineAnnealing: total_steps must be >= 1, got {}", total_steps);
}

double CosineAnnealing::operator()(std::int64_t step) const {
  check_step(step, "CosineAnnealing");
  if (step >= total_steps_) return min_lr_;
  const double progress = static_cast<double>(step) / static_cast<double>(total_steps_);
  return min_lr_ + (base_lr_ - min_lr_) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

LinearWarmup::LinearWarmup(double base_lr, std::int64_t warmup_steps, Schedule after)
    : base_lr_(base_lr), warmup_steps_(warmup_steps), after_(std::move(after)) {
  check_base_lr(base_lr, "LinearWarmup");
  if (warmup_steps < 0) fail("LinearWarmup: warmup_steps must be >= 0, got {}", warmup_steps);
}

double LinearWarmup::operator()(std::int64_t step) const {
  check_step(step, "LinearWarmup");
  if (step < warmup_steps_)
    return base_lr_ * static_cast<double>(step + 1) / static_cast<double>(warmup_steps_);
  return after_ ? after_(step - warmup_steps_) : base_lr_;
}

NoamSchedule::NoamSchedule(Index d_model, std::int64_t warmup_steps, double factor)
    : scale_(factor / std::sqrt(static_cast<double>(d_model))),
      warmup_(static_cast<double>(warmup_steps)) {
  check_base_lr(factor, "NoamSchedule", "factor");
  if (d_model < 1) fail("NoamSchedule: d_model must be >= 1, got {}", d_model);
  if (warmup_steps < 1) fail("NoamSchedule: warmup_steps must be >= 1, got {}", warmup_steps);
}

double NoamSchedule::operator()(std::int64_t step) const {
  check_step(step, "NoamSchedule");
  const double n = static_cast<double>(step + 1);  // the paper's step_num, counted from 1
  return scale_ * std::min(1 / std::sqrt(n), n / (warmup_ * std::sqrt(warmup_)));
}

double apply_schedule(Optimizer& optimizer, const Schedule& schedule) {
  if (!schedule) fail("apply_schedule: the schedule is empty (a default-constructed Schedule)");
  const double lr = schedule(optimizer.steps_taken());
  optimizer.set_learning_rate(lr);
  return lr;
}

}  // namespace attend::optim
