// Loading into a model and an optimizer: every mismatch is one error naming the parameter,
// and a load that fails changes nothing.
#include "checkpoint_helpers.h"
#include "nn/io/checkpoint_file.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// Like TinyNet, but the second layer is called "head".
struct RenamedNet : nn::Module {
  nn::Linear fc1, head;
  explicit RenamedNet(Generator& gen) : fc1(4, 8, true, gen), head(8, 3, true, gen) {
    register_module("fc1", fc1);
    register_module("head", head);
  }
};

}  // namespace

TEST_CASE("a model with other parameter names is refused, naming them", "[io]") {
  ScratchDir dir("names");
  Generator init(1);
  TinyNet net(init);
  const std::string path = dir.file("net.ckpt");
  nn::save_checkpoint(path, net);
  RenamedNet renamed(init);
  CHECK(error_message([&] { nn::load_checkpoint(path, renamed); }) ==
        "checkpoint '" + path +
            "' does not match the model: the model has 'head.weight', 'head.bias' that the "
            "checkpoint lacks; the checkpoint has 'fc2.weight', 'fc2.bias' that the model lacks");
  OneLayer smaller(4, 8, init);
  CHECK_THAT(error_message([&] { nn::load_checkpoint(path, smaller); }),
             Contains("the model has 'fc.weight', 'fc.bias' that the checkpoint lacks; the "
                      "checkpoint has 'fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias' that the "
                      "model lacks"));
}

TEST_CASE("a parameter of another shape is refused, naming both shapes", "[io]") {
  ScratchDir dir("shapes");
  Generator init(1);
  TinyNet wide(init, 16);
  const std::string path = dir.file("wide.ckpt");
  nn::save_checkpoint(path, wide);
  TinyNet narrow(init, 8);
  CHECK(error_message([&] { nn::load_checkpoint(path, narrow); }) ==
        "checkpoint '" + path +
            "': parameter 'fc1.weight' has shape [16,4] in the checkpoint but [8,4] in the model");
}

TEST_CASE("a parameter of another dtype is refused, naming both dtypes", "[io]") {
  ScratchDir dir("dtypes");
  Generator init(1);
  TinyNet net(init);
  const std::string path = dir.file("f32.ckpt");
  nn::save_checkpoint(path, net);
  TinyNet doubles(init);
  doubles.to(kFloat64);
  CHECK(error_message([&] { nn::load_checkpoint(path, doubles); }) ==
        "checkpoint '" + path +
            "': parameter 'fc1.weight' is float32 in the checkpoint but float64 in the model");
}

TEST_CASE("a load that fails changes neither the model nor the optimizer", "[io]") {
  ScratchDir dir("no-partial");
  Generator init(1);
  TinyNet wide(init, 16);
  // Save a model whose fc2 has a different shape from the target's, but whose fc1.bias
  // would fit: nothing may be copied before the whole file is known to fit.
  const std::string path = dir.file("wide.ckpt");
  nn::save_checkpoint(path, wide);
  TinyNet target(init, 8);
  const auto before = parameter_values(target);
  CHECK_THAT(error_message([&] { nn::load_checkpoint(path, target); }), Contains("has shape"));
  CHECK(parameter_values(target) == before);

  // An optimizer that refuses the saved state: the model must stay as it was.
  TinyNet net(init);
  MomentumSGD optimizer(net.parameters(), 0.1, 0.9);
  const std::string with_state = dir.file("state.ckpt");
  nn::save_checkpoint(with_state, net, &optimizer, {0, {}});
  Generator other(2);
  TinyNet fresh(other);
  MomentumSGD partial(std::vector<Tensor>{fresh.fc1.weight}, 0.1, 0.9);  // 1 parameter, not 4
  const auto fresh_before = parameter_values(fresh);
  CHECK(error_message([&] { nn::load_checkpoint(with_state, fresh, &partial); }) ==
        "checkpoint '" + with_state + "': MomentumSGD: 4 state entries for 1 parameters");
  CHECK(parameter_values(fresh) == fresh_before);
}

TEST_CASE("optimizer state: ignored without an optimizer, required with one", "[io]") {
  ScratchDir dir("optimizer");
  Generator init(1);
  TinyNet net(init);
  MomentumSGD optimizer(net.parameters(), 0.1, 0.9);
  const std::string with_state = dir.file("with.ckpt");
  nn::save_checkpoint(with_state, net, &optimizer, {4, {}});
  const std::string without_state = dir.file("without.ckpt");
  nn::save_checkpoint(without_state, net, nullptr, {4, {}});

  Generator other(2);
  TinyNet for_evaluation(other);
  CHECK(nn::load_checkpoint(with_state, for_evaluation).step ==
        4);  // the optimizer's part is skipped
  CHECK(parameter_values(for_evaluation) == parameter_values(net));

  MomentumSGD fresh_optimizer(for_evaluation.parameters(), 0.1, 0.9);
  CHECK(error_message(
            [&] { nn::load_checkpoint(without_state, for_evaluation, &fresh_optimizer); }) ==
        "checkpoint '" + without_state +
            "' has no optimizer state (it was saved without an optimizer); pass nullptr as the "
            "optimizer to load only the model");
}

TEST_CASE("checkpoint entries carry the documented names", "[io]") {
  ScratchDir dir("entry-names");
  Generator init(1);
  TinyNet net(init);
  MomentumSGD optimizer(net.parameters(), 0.1, 0.9);
  const std::string path = dir.file("names.ckpt");
  nn::save_checkpoint(path, net, &optimizer, {9, {}});
  std::vector<std::string> names;
  for (const auto& entry : nn::read_checkpoint_file(path)) names.push_back(entry.name);
  CHECK(names == std::vector<std::string>{"model/fc1.weight", "model/fc1.bias", "model/fc2.weight",
                                          "model/fc2.bias", "optimizer/0.velocity",
                                          "optimizer/1.velocity", "optimizer/2.velocity",
                                          "optimizer/3.velocity", "training/optimizer_steps",
                                          "training/step", "training/rng"});
}

TEST_CASE("a checkpoint without the training entries is refused", "[io]") {
  ScratchDir dir("no-training");
  Generator init(1);
  OneLayer model(3, 2, init);
  const std::string path = dir.file("bare.ckpt");
  std::vector<nn::CheckpointEntry> entries = {{"model/fc.weight", model.fc.weight.data()},
                                              {"model/fc.bias", model.fc.bias.data()}};
  nn::write_checkpoint_file(path, entries);
  CHECK(error_message([&] { nn::load_checkpoint(path, model); }) ==
        "checkpoint '" + path +
            "' lacks the training step (entry 'training/step'): it was not written by "
            "save_checkpoint");
}
