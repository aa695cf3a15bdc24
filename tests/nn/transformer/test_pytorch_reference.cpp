// attend's Transformer modules give PyTorch's numbers: the weights of a PyTorch module are
// loaded by name (the same names: in_proj_weight, out_proj.weight, linear1, norm1.weight, ...)
// and the outputs compared with PyTorch's, all in float64 (tolerance 1e-10: both sides
// compute the same formulas, only the order of the sums differs). The reference values come
// from pytorch_reference.py (PyTorch 1.13, run once; see that file to regenerate them).
#include <cmath>
#include <map>

#include "pytorch_reference.h"
#include "support.h"

using namespace attend;
using attend::testing::check_close;

namespace {

using Case = std::vector<pytorch_reference::Entry>;
constexpr double kTolerance = 1e-10;

NDArray array(const Case& c, const std::string& name) {
  for (const auto& e : c)
    if (e.name == name) {
      Shape shape{std::span<const Index>(e.shape.data(), e.shape.size())};
      return NDArray::from_vector(std::span<const double>(e.values), shape);
    }
  FAIL("no entry " << name);
  return {};
}

// Every parameter of the module must be in the case, with the same shape.
void load(nn::Module& module, const Case& c) {
  module.to(kFloat64);
  std::size_t loaded = 0;
  for (auto& [name, p] : module.named_parameters()) {
    NDArray value = array(c, "param:" + name);
    INFO(name);
    REQUIRE(value.shape() == p.shape());
    p.data() = value;
    ++loaded;
  }
  std::size_t expected = 0;
  for (const auto& e : c) expected += e.name.rfind("param:", 0) == 0;
  CHECK(loaded == expected);
}

}  // namespace

TEST_CASE("MultiheadAttention gives PyTorch's numbers", "[nn][transformer]") {
  const Case& c = pytorch_reference::multihead_attention;
  nn::MultiheadAttention mha(4, 2);  // [T, B, E], as PyTorch's default
  load(mha, c);
  mha.eval();
  Tensor query(array(c, "input:query")), memory(array(c, "input:memory"));
  nn::MhaForward args{.key_padding_mask = nn::Mask::blocked(Tensor(array(c, "mask:padding"))),
                      .attn_mask = nn::Mask::additive(Tensor(array(c, "mask:additive"))),
                      .average_attn_weights = false};
  nn::MhaOutput per_head = mha(query, memory, memory, args);
  check_close(per_head.output.data(), array(c, "output:output"), kTolerance);
  check_close(per_head.weights.data(), array(c, "output:weights_per_head"), kTolerance);
  args.average_attn_weights = true;
  check_close(mha(query, memory, memory, args).weights.data(), array(c, "output:weights_averaged"),
              kTolerance);
}

TEST_CASE("TransformerEncoderLayer gives PyTorch's numbers, post- and pre-norm",
          "[nn][transformer]") {
  for (bool norm_first : {false, true}) {
    const Case& c = norm_first ? pytorch_reference::encoder_pre_norm_gelu
                               : pytorch_reference::encoder_post_norm_relu;
    nn::TransformerEncoderLayer layer(
        4, 2,
        {.dim_feedforward = 8,
         .dropout = 0,
         .activation = norm_first ? nn::Activation::gelu : nn::Activation::relu,
         .batch_first = true,
         .norm_first = norm_first});
    load(layer, c);
    layer.eval();
    Tensor src(array(c, "input:src"));
    nn::Mask padding = nn::Mask::blocked(Tensor(array(c, "mask:padding")));
    Tensor y = layer(src, norm_first ? nn::causal_mask(3) : nn::Mask(), padding);
    INFO("norm_first " << norm_first);
    check_close(y.data(), array(c, "output:output"), kTolerance);
  }
}

TEST_CASE("TransformerDecoderLayer gives PyTorch's numbers", "[nn][transformer]") {
  const Case& c = pytorch_reference::decoder_post_norm_relu;
  nn::TransformerDecoderLayer layer(4, 2,
                                    {.dim_feedforward = 8, .dropout = 0, .batch_first = true});
  load(layer, c);
  layer.eval();
  Tensor tgt(array(c, "input:tgt")), memory(array(c, "input:memory"));
  Tensor y =
      layer(tgt, memory,
            {.tgt_mask = nn::causal_mask(3),
             .memory_key_padding_mask = nn::Mask::blocked(Tensor(array(c, "mask:padding")))});
  check_close(y.data(), array(c, "output:output"), kTolerance);
}
