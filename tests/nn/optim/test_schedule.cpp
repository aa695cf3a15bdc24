// Learning-rate schedules at chosen steps, and applying one to an optimizer.
#include <cmath>

#include "optim_support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("StepLR: base_lr * gamma^floor(step / step_size)", "[optim]") {
  optim::StepLR schedule(0.1, 3, 0.5);
  CHECK(schedule(0) == 0.1);
  CHECK(schedule(2) == 0.1);
  CHECK(schedule(3) == 0.05);
  CHECK(schedule(5) == 0.05);
  CHECK(schedule(6) == 0.025);
  CHECK(schedule(9) == 0.0125);
  CHECK(optim::StepLR(1.0, 10)(25) == std::pow(0.1, 2));  // gamma defaults to 0.1
}

TEST_CASE("CosineAnnealing: half a cosine from base_lr to min_lr, then min_lr", "[optim]") {
  // base 1, 4 steps: lr = (1 + cos(pi step / 4)) / 2
  optim::CosineAnnealing schedule(1.0, 4);
  CHECK(schedule(0) == 1.0);
  CHECK_THAT(schedule(1), WithinAbs(0.8535533905932737, 1e-15));  // (1 + sqrt(2)/2) / 2
  CHECK_THAT(schedule(2), WithinAbs(0.5, 1e-15));
  CHECK_THAT(schedule(3), WithinAbs(0.1464466094067262, 1e-15));  // (1 - sqrt(2)/2) / 2
  CHECK(schedule(4) == 0.0);
  CHECK(schedule(100) == 0.0);
  // With min_lr 0.1 and base 1.1 the curve is shifted up: halfway is 0.1 + 1.0 * 0.5.
  optim::CosineAnnealing floor(1.1, 4, 0.1);
  CHECK_THAT(floor(2), WithinAbs(0.6, 1e-15));
  CHECK(floor(4) == 0.1);
  CHECK(floor(50) == 0.1);
}

TEST_CASE("LinearWarmup: base_lr * (step + 1) / warmup_steps, then base_lr", "[optim]") {
  optim::LinearWarmup schedule(0.4, 4);
  CHECK_THAT(schedule(0), WithinAbs(0.1, 1e-15));
  CHECK_THAT(schedule(1), WithinAbs(0.2, 1e-15));
  CHECK_THAT(schedule(2), WithinAbs(0.3, 1e-15));
  CHECK(schedule(3) == 0.4);
  CHECK(schedule(4) == 0.4);
  CHECK(schedule(1000) == 0.4);
  CHECK(optim::LinearWarmup(0.4, 0)(0) == 0.4);  // no warmup at all
}

TEST_CASE("LinearWarmup then cosine: the wrapped schedule starts after the warmup", "[optim]") {
  // 2 warmup steps to 0.4, then a cosine over 4 steps counted from step 2.
  optim::Schedule schedule = optim::LinearWarmup(0.4, 2, optim::CosineAnnealing(0.4, 4));
  CHECK_THAT(schedule(0), WithinAbs(0.2, 1e-15));
  CHECK(schedule(1) == 0.4);
  CHECK(schedule(2) == 0.4);                                            // cosine step 0
  CHECK_THAT(schedule(3), WithinAbs(0.4 * 0.8535533905932737, 1e-15));  // cosine step 1
  CHECK_THAT(schedule(4), WithinAbs(0.2, 1e-15));                       // cosine step 2
  CHECK(schedule(6) == 0.0);
  CHECK(schedule(60) == 0.0);
}

TEST_CASE("NoamSchedule: d^-0.5 min(n^-0.5, n w^-1.5), n = step + 1", "[optim]") {
  // d_model 16, warmup 4, factor 2: scale = 2 / 4 = 0.5. The peak at n = 4 (step 3) is
  // 2 * (16 * 4)^-0.5 = 0.25; the ramp before it is 0.25 n / 4, the decay 0.25 sqrt(4 / n).
  optim::NoamSchedule schedule(16, 4, 2.0);
  CHECK_THAT(schedule(0), WithinAbs(0.0625, 1e-15));
  CHECK_THAT(schedule(1), WithinAbs(0.125, 1e-15));
  CHECK_THAT(schedule(2), WithinAbs(0.1875, 1e-15));
  CHECK_THAT(schedule(3), WithinAbs(0.25, 1e-15));     // the peak
  CHECK_THAT(schedule(15), WithinAbs(0.125, 1e-15));   // n = 16: 0.25 * sqrt(4 / 16)
  CHECK_THAT(schedule(63), WithinAbs(0.0625, 1e-15));  // n = 64
  for (std::int64_t step = 0; step < 40; ++step) CHECK(schedule(step) <= schedule(3));
  // The paper's setting: d_model 512, warmup 4000, peak (512 * 4000)^-0.5 = 6.9877e-4.
  CHECK_THAT(optim::NoamSchedule(512, 4000)(3999), WithinAbs(6.98771242e-4, 1e-12));
  // Its warmup is LinearWarmup to the same peak.
  optim::LinearWarmup ramp(0.25, 4);
  for (std::int64_t step = 0; step < 4; ++step)
    CHECK_THAT(schedule(step), WithinAbs(ramp(step), 1e-15));
  CHECK_THAT(error_message([] { optim::NoamSchedule(16, 0); }),
             Contains("NoamSchedule: warmup_steps must be >= 1, got 0"));
  CHECK_THAT(error_message([] { optim::NoamSchedule(0, 4); }),
             Contains("NoamSchedule: d_model must be >= 1, got 0"));
  CHECK_THAT(error_message([] { optim::NoamSchedule(16, 4)(-1); }),
             Contains("NoamSchedule: the step must be >= 0, got -1"));
}

TEST_CASE("apply_schedule sets the learning rate of the next step", "[optim]") {
  // Constant gradient 1 and StepLR(0.1, 2, 0.5): steps use 0.1, 0.1, 0.05, 0.05, so
  // p = 0 - 0.1 - 0.1 - 0.05 - 0.05 = -0.3.
  Tensor p = parameter({0}, kFloat64);
  optim::SGD sgd({p}, {.lr = 123});  // replaced by the schedule
  optim::Schedule schedule = optim::StepLR(0.1, 2, 0.5);
  std::vector<double> used;
  for (int step = 0; step < 4; ++step) {
    used.push_back(optim::apply_schedule(sgd, schedule));
    CHECK(sgd.learning_rate() == used.back());
    set_grad(p, {1});
    sgd.step();
  }
  CHECK(used == std::vector<double>{0.1, 0.1, 0.05, 0.05});
  CHECK_THAT(p.item(), WithinAbs(-0.3, 1e-15));
  // A resumed optimizer continues the schedule from its restored step count.
  optim::SGD resumed({p}, {.lr = 123});
  resumed.load_state({}, 4);
  CHECK(optim::apply_schedule(resumed, schedule) == 0.025);
}

TEST_CASE("schedule errors", "[optim]") {
  CHECK_THAT(error_message([] { optim::StepLR(0.1, 0); }),
             Contains("StepLR: step_size must be >= 1, got 0"));
  CHECK_THAT(error_message([] { optim::StepLR(-0.1, 2); }),
             Contains("StepLR: base_lr must be finite and >= 0, got -0.1"));
  CHECK_THAT(error_message([] { optim::CosineAnnealing(0.1, 0); }),
             Contains("CosineAnnealing: total_steps must be >= 1, got 0"));
  CHECK_THAT(error_message([] { optim::CosineAnnealing(0.1, 10, -1); }),
             Contains("CosineAnnealing: min_lr must be finite and >= 0, got -1"));
  CHECK_THAT(error_message([] { optim::LinearWarmup(0.1, -2); }),
             Contains("LinearWarmup: warmup_steps must be >= 0, got -2"));
  CHECK_THAT(error_message([] { optim::CosineAnnealing(0.1, 10)(-1); }),
             Contains("CosineAnnealing: the step must be >= 0, got -1"));
  Tensor p = parameter({0}, kFloat64);
  optim::SGD sgd({p});
  CHECK_THAT(error_message([&] { optim::apply_schedule(sgd, optim::Schedule()); }),
             Contains("apply_schedule: the schedule is empty"));
  // A schedule that returns a negative rate is caught by the optimizer.
  CHECK_THAT(error_message([&] { optim::apply_schedule(sgd, [](std::int64_t) { return -1.0; }); }),
             Contains("learning rate must be finite and >= 0, got -1"));
}
