// Resuming is exact: a run that stops, saves, and continues in fresh objects computes bit
// for bit the losses of a run that never stopped.
#include "checkpoint_helpers.h"
#include "nn/data/data_loader.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// 32 fixed samples: 4 features, 3 classes.
struct ToyData {
  NDArray inputs, targets;
  ToyData() {
    Generator gen(100);
    inputs = NDArray::normal({32, 4}, gen);
    targets = NDArray::empty({32}, kInt64);
    for (auto& t : targets.span<std::int64_t>()) t = gen.randint(3);
  }
};

// One step on 8 samples drawn with `gen`, with a learning rate that depends on the step:
// the model, the optimizer's velocities, the generator and the step all shape the result.
Tensor train_step(TinyNet& net, MomentumSGD& optimizer, Generator& gen, std::int64_t step,
                  const ToyData& data) {
  std::vector<Index> rows(8);
  for (Index& r : rows) r = gen.randint(32);
  NDArray index = NDArray::from_vector(rows, {8});
  Tensor x(index_select(data.inputs, 0, index)), y(index_select(data.targets, 0, index));
  optimizer.set_learning_rate(0.2 / (1.0 + 0.1 * static_cast<double>(step)));
  optimizer.zero_grad();
  Tensor loss = nn::cross_entropy(net.forward(x), y);
  loss.backward();
  optimizer.step();
  return loss;
}

std::vector<std::uint32_t> continue_from_checkpoint(const std::string& path, const ToyData& data,
                                                    std::int64_t total_steps,
                                                    bool with_optimizer_state) {
  Generator other_init(999);  // different initial weights: the values must come from the file
  TinyNet net(other_init);
  MomentumSGD optimizer(net.parameters(), 0.2, 0.9);
  Generator gen(12345);  // a different seed: the state must come from the file
  nn::TrainingState state =
      nn::load_checkpoint(path, net, with_optimizer_state ? &optimizer : nullptr);
  gen.set_state(state.rng);
  std::vector<std::uint32_t> losses;
  for (std::int64_t step = state.step; step < total_steps; ++step)
    losses.push_back(bits(train_step(net, optimizer, gen, step, data)));
  return losses;
}

}  // namespace

TEST_CASE("a resumed run computes bit for bit the losses of an uninterrupted run", "[io]") {
  ScratchDir dir("resume");
  const ToyData data;
  constexpr std::int64_t kFirst = 5, kTotal = 12;

  // The uninterrupted run.
  std::vector<std::uint32_t> straight;
  std::vector<std::vector<double>> straight_final;
  {
    Generator init(7), gen(42);
    TinyNet net(init);
    MomentumSGD optimizer(net.parameters(), 0.2, 0.9);
    for (std::int64_t step = 0; step < kTotal; ++step)
      straight.push_back(bits(train_step(net, optimizer, gen, step, data)));
    straight_final = parameter_values(net);
  }

  // The same run, stopped after kFirst steps and saved.
  const std::string path = dir.file("run.ckpt");
  {
    Generator init(7), gen(42);
    TinyNet net(init);
    MomentumSGD optimizer(net.parameters(), 0.2, 0.9);
    for (std::int64_t step = 0; step < kFirst; ++step)
      REQUIRE(bits(train_step(net, optimizer, gen, step, data)) == straight[step]);
    nn::save_checkpoint(path, net, &optimizer, {kFirst, gen.state()});
  }

  // Continued in fresh objects.
  Generator other_init(999);
  TinyNet net(other_init);
  MomentumSGD optimizer(net.parameters(), 0.2, 0.9);
  Generator gen(12345);
  nn::TrainingState state = nn::load_checkpoint(path, net, &optimizer);
  CHECK(state.step == kFirst);
  CHECK(optimizer.steps_taken() == kFirst);
  gen.set_state(state.rng);
  for (std::int64_t step = state.step; step < kTotal; ++step) {
    INFO("step " << step);
    CHECK(bits(train_step(net, optimizer, gen, step, data)) == straight[step]);
  }
  CHECK(parameter_values(net) == straight_final);

  // The check has teeth: without the optimizer's velocities the continuation differs.
  std::vector<std::uint32_t> without = continue_from_checkpoint(path, data, kTotal, false);
  std::vector<std::uint32_t> expected(straight.begin() + kFirst, straight.end());
  CHECK(continue_from_checkpoint(path, data, kTotal, true) == expected);
  CHECK(without != expected);
}

TEST_CASE("resuming at an epoch boundary with the DataLoader's generator is exact", "[io]") {
  ScratchDir dir("resume-loader");
  const ToyData data;
  const data::ArrayDataset dataset(data.inputs.reshape({32, 4}), data.targets);
  const data::DataLoaderOptions options{.batch_size = 6, .shuffle = true, .seed = 5};
  auto run_epochs = [&](TinyNet& net, MomentumSGD& optimizer, data::DataLoader& loader,
                        std::int64_t& step, int epochs) {
    std::vector<std::uint32_t> losses;
    for (int e = 0; e < epochs; ++e)
      for (const data::Batch& batch : loader) {
        optimizer.set_learning_rate(0.1 / (1.0 + 0.05 * static_cast<double>(step++)));
        optimizer.zero_grad();
        Tensor loss = nn::cross_entropy(net.forward(batch.inputs), batch.targets);
        loss.backward();
        optimizer.step();
        losses.push_back(bits(loss));
      }
    return losses;
  };

  std::vector<std::uint32_t> straight;
  {
    Generator init(3);
    TinyNet net(init);
    MomentumSGD optimizer(net.parameters(), 0.1, 0.8);
    data::DataLoader loader(dataset, options);
    std::int64_t step = 0;
    straight = run_epochs(net, optimizer, loader, step, 3);
    REQUIRE(straight.size() == 18);  // 3 epochs of 6 batches (the last of 2 samples)
  }
  const std::string path = dir.file("loader.ckpt");
  {
    Generator init(3);
    TinyNet net(init);
    MomentumSGD optimizer(net.parameters(), 0.1, 0.8);
    data::DataLoader loader(dataset, options);
    std::int64_t step = 0;
    run_epochs(net, optimizer, loader, step, 2);
    nn::save_checkpoint(path, net, &optimizer, {step, loader.generator().state()});
  }
  Generator init(77);
  TinyNet net(init);
  MomentumSGD optimizer(net.parameters(), 0.1, 0.8);
  data::DataLoader loader(dataset, {.batch_size = 6, .shuffle = true, .seed = 999});
  nn::TrainingState state = nn::load_checkpoint(path, net, &optimizer);
  loader.generator().set_state(state.rng);
  std::int64_t step = state.step;
  CHECK(step == 12);
  std::vector<std::uint32_t> resumed = run_epochs(net, optimizer, loader, step, 1);
  CHECK(resumed == std::vector<std::uint32_t>(straight.begin() + 12, straight.end()));
}

TEST_CASE("the training step and the generator state come back unchanged", "[io]") {
  ScratchDir dir("state");
  Generator init(1), gen(2024);
  for (int i = 0; i < 5; ++i) gen.next_u64();
  OneLayer model(3, 2, init);
  const nn::TrainingState saved{1234567890123LL, gen.state()};
  nn::save_checkpoint(dir.file("s.ckpt"), model, nullptr, saved);
  nn::TrainingState loaded = nn::load_checkpoint(dir.file("s.ckpt"), model);
  CHECK(loaded.step == saved.step);
  CHECK(loaded.rng == saved.rng);
  // The restored generator continues the same sequence.
  Generator restored(0);
  restored.set_state(loaded.rng);
  CHECK(restored.next_u64() == gen.next_u64());
}
