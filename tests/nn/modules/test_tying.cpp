// Weight tying: one tensor held by an Embedding and an output Linear. It is listed, counted,
// optimized and saved once, and its gradient sums both uses (float64 gradcheck with
// gradcheck's defaults: eps 1e-6, atol 1e-5, rtol 1e-3).
#include "nn/embedding.h"
#include "nn/io/checkpoint.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "scratch_dir.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// A tiny language model's ends: ids -> vectors [.., D] -> scores over the V tokens.
struct TiedModel : nn::Module {
  nn::Embedding embed;
  nn::Linear out;
  TiedModel(Index vocab, Index dim, Generator& gen, bool tie = true)
      : embed(vocab, dim, nn::kNoPadding, gen), out(dim, vocab, true, gen) {
    register_module("embed", embed);
    register_module("out", out);
    if (tie) nn::tie_weights(out, embed);
  }
  Tensor forward(const Tensor& ids) { return out(tanh(embed(ids))); }
};

std::vector<std::string> names(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, _] : m.named_parameters()) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("same_as tells one tensor from an equal copy", "[nn]") {
  Tensor a = ones({2});
  Tensor b = a;
  CHECK(a.same_as(b));
  CHECK_FALSE(a.same_as(ones({2})));
  CHECK_FALSE(Tensor().same_as(Tensor()));  // undefined tensors are no tensor at all
}

TEST_CASE("tie_weights: one tensor, listed and counted once", "[nn]") {
  Generator gen(1);
  TiedModel model(5, 3, gen);
  CHECK(model.out.weight.same_as(model.embed.weight));
  CHECK(names(model) == std::vector<std::string>{"embed.weight", "out.bias"});  // first name wins
  CHECK(model.parameters().size() == 2);
  CHECK(model.parameter_count() == 5 * 3 + 5);
  TiedModel untied(5, 3, gen, false);
  CHECK(untied.parameter_count() == 2 * 5 * 3 + 5);
  model.to(kFloat64);  // converts the shared tensor, seen by both modules
  CHECK(model.out.weight.same_as(model.embed.weight));
  CHECK(model.out.weight.dtype() == kFloat64);
}

TEST_CASE("tie_weights rejects a Linear that does not map D -> V", "[nn]") {
  Generator gen(2);
  nn::Embedding embed(5, 3, nn::kNoPadding, gen);
  nn::Linear wrong(5, 3, true, gen);  // weight [3, 5]
  CHECK_THAT(error_message([&] { nn::tie_weights(wrong, embed); }),
             Contains("tie_weights: the Linear's weight is [3,5] but the Embedding's is [5,3]"));
}

TEST_CASE("gradcheck: a tied embedding -> linear model", "[nn][gradcheck]") {
  Generator gen(3);
  TiedModel model(6, 4, gen);
  model.to(kFloat64);
  Tensor ids = Tensor(NDArray::from_list({1, 4, 4, 0, 5}, {5}, kInt64));
  Tensor targets = Tensor(NDArray::from_list({4, 4, 0, 5, 2}, {5}, kInt64));
  auto loss = [&](const std::vector<Tensor>&) {
    return nn::cross_entropy(model.forward(ids), targets);
  };
  auto r = gradcheck(loss, model.parameters());
  INFO(r.report);
  CHECK(r.ok);

  // The tied gradient is the sum of the two uses' gradients, measured on an untied copy.
  TiedModel untied(6, 4, gen, false);
  untied.to(kFloat64);
  copy_(untied.embed.weight.data(), model.embed.weight.data());
  copy_(untied.out.weight.data(), model.embed.weight.data());
  copy_(untied.out.bias.data(), model.out.bias.data());
  model.zero_grad();
  loss({}).backward();
  nn::cross_entropy(untied.forward(ids), targets).backward();
  NDArray both = untied.embed.weight.grad().data() + untied.out.weight.grad().data();
  check_close(model.embed.weight.grad().data(), both, 1e-12);
}

TEST_CASE("a tied model's checkpoint stores the tensor once and loads back tied", "[nn]") {
  ScratchDir dir("tying");
  Generator gen(4);
  TiedModel saved(5, 3, gen), loaded(5, 3, gen);
  nn::save_checkpoint(dir.file("tied.ckpt"), saved);
  nn::load_checkpoint(dir.file("tied.ckpt"), loaded);
  CHECK(loaded.out.weight.same_as(loaded.embed.weight));
  check_close(loaded.embed.weight.data(), saved.embed.weight.data(), 0);
  check_close(loaded.out.bias.data(), saved.out.bias.data(), 0);
  Tensor ids = Tensor(NDArray::from_list({0, 2, 4}, {3}, kInt64));
  check_close(loaded.forward(ids).data(), saved.forward(ids).data(), 0);
  // An untied model has an out.weight that the checkpoint lacks: a clear error.
  TiedModel untied(5, 3, gen, false);
  CHECK_THAT(error_message([&] { nn::load_checkpoint(dir.file("tied.ckpt"), untied); }),
             Contains("the model has 'out.weight' that the checkpoint lacks"));
}
