// Exercise checks for docs/03_training.md. Each test passes with the reference solutions in
// lessons/03_training/ and checks what any correct solution must do: put your own code in
// the reference function's place and run `ctest --test-dir build -L lesson03`.
#include "lessons/03_training/lesson.h"
#include "support.h"
#include "tensor/parallel.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson03;

TEST_CASE("exercise check: the parameter counts by formula", "[lesson03]") {
  // The lesson's defaults, the gradcheck sizes, and a few others.
  const std::vector<MlpConfig> mlps = {
      {}, gradcheck_configs().mlp, {.hidden1 = 1, .hidden2 = 1}, {.hidden1 = 512, .hidden2 = 64}};
  for (const MlpConfig& config : mlps) {
    INFO("MLP " << config.hidden1 << ", " << config.hidden2);
    Generator gen(0);
    CHECK(mlp_parameter_count(config) == Mlp(config, gen).parameter_count());
  }
  CHECK(mlp_parameter_count({}) == 235146);  // what section 2 prints
  const std::vector<CnnConfig> cnns = {{},
                                       gradcheck_configs().cnn,
                                       {.channels1 = 8, .channels2 = 16, .hidden = 64},
                                       {.channels1 = 1, .channels2 = 1, .hidden = 1}};
  for (const CnnConfig& config : cnns) {
    INFO("CNN " << config.channels1 << ", " << config.channels2 << ", " << config.hidden);
    Generator gen(0);
    CHECK(cnn_parameter_count(config) == SmallCnn(config, gen).parameter_count());
  }
  CHECK(cnn_parameter_count({}) == 206922);
}

TEST_CASE("exercise check: the number of threads does not change the MLP's training",
          "[lesson03]") {
  // Every matrix product computes each output element on one thread, in a fixed order
  // (tensor/parallel.h), so the MLP's losses are bitwise the same on 1 and 2 threads.
  const data::LabelledImages images = data::synthetic_fashion_mnist(data::Split::kTrain, 96, 0);
  auto losses_with = [&](int threads) {
    set_num_threads(threads);
    Generator init(1);
    Mlp mlp({.hidden1 = 64, .hidden2 = 32, .dropout = 0.2}, init);
    optim::Adam adam(mlp.parameters());
    data::DataLoader loader(images.dataset(), {.batch_size = 32, .shuffle = true, .seed = 2});
    optim::Schedule schedule = learning_rate_schedule(1e-3, true, 2 * loader.size());
    std::vector<double> losses;
    for (int epoch = 1; epoch <= 2; ++epoch)
      train_epoch(mlp, adam, schedule, loader, epoch, 0, &losses);
    return losses;
  };
  const int before = num_threads();
  const std::vector<double> one = losses_with(1), two = losses_with(2);
  set_num_threads(before);
  REQUIRE(one.size() == 6);
  CHECK(compare_losses(one, two).equal == 6);
}
