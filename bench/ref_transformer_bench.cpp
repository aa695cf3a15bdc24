// REF-TRANSFORMER: one training step of a tiny decoder-only (GPT-style) Transformer, with
// attend.
//
// The same model is in bench/pytorch/ref_transformer.py, for the side-by-side comparison
// (bench/compare_pytorch.sh runs both): vocabulary 32, d_model 64, 4 heads of 16, 2 pre-norm
// layers (LayerNorm before each sub-layer, as GPT-2) with causal self-attention and a GELU
// feed-forward network of 256, learned positions (nn::LearnedPositionalEmbedding, a [32, 64]
// parameter added to the token embeddings), a final LayerNorm and a linear head; no dropout;
// sequences of 32 tokens, batch 32, next-token cross-entropy, Adam. 106,272 parameters.
//
// --batch and --length change the shape (defaults: the reference 32 and 32; bench/scaling.sh
// varies them); the learned positions are one per position, so --length also sets their count
// (and the parameter count: 64 more per position).
#include "bench/ref_harness.h"

using namespace attend;

namespace {

constexpr Index kVocab = 32, kModel = 64, kHeads = 4, kLayers = 2, kFeedForward = 256;

struct Gpt : nn::Module {
  nn::Embedding tok{kVocab, kModel};
  nn::LearnedPositionalEmbedding pos;
  std::vector<std::unique_ptr<nn::TransformerEncoderLayer>> blocks;
  nn::LayerNorm ln_f{kModel};
  nn::Linear head{kModel, kVocab};

  explicit Gpt(Index length) : pos(length, kModel) {
    register_module("tok", tok);
    register_module("pos", pos);
    const nn::TransformerLayerOptions options{.dim_feedforward = kFeedForward,
                                              .dropout = 0,
                                              .activation = nn::Activation::gelu,
                                              .batch_first = true,
                                              .norm_first = true,
                                              .need_weights = false};
    for (Index i = 0; i < kLayers; ++i) {
      blocks.push_back(std::make_unique<nn::TransformerEncoderLayer>(kModel, kHeads, options));
      register_module(fmt::format("blocks.{}", i), *blocks.back());
    }
    register_module("ln_f", ln_f);
    register_module("head", head);
  }

  // ids [B, T] -> logits [B, T, V]
  Tensor forward(const Tensor& ids) {
    Tensor x = pos(tok(ids));  // token embeddings + the learned positions [T, D]
    for (auto& block : blocks) x = (*block)(x, {}, {}, /*is_causal=*/true);
    return head(ln_f(x));
  }
};

struct Batch {
  Tensor inputs, targets;  // [B, T] int64 each: targets are the inputs shifted by one
};

struct Options : bench::RefOptions {
  int batch = flag(batch, "batch", 32, "sequences per batch", app::between(1, 1024));
  int length = flag(length, "length", 32, "tokens per sequence", app::between(1, 1024));
};

}  // namespace

int main(int argc, char** argv) {
  const auto options = bench::parse_ref_options<Options>(argc, argv);
  const Index batch = options.batch, length = options.length;
  manual_seed(0);
  Gpt model(length);
  optim::Adam adam(model.parameters(), {.lr = 1e-3});
  Generator gen(1);
  std::vector<Batch> batches;
  for (int b = 0; b < 8; ++b) {
    NDArray sequence = NDArray::empty({batch, length + 1}, kInt64);
    for (auto& x : sequence.span<std::int64_t>()) x = gen.randint(kVocab);
    batches.push_back(
        {Tensor(slice(sequence, 1, 0, length)), Tensor(slice(sequence, 1, 1, length + 1))});
  }
  const auto train_step = [&](int i) {
    const Batch& b = batches[static_cast<std::size_t>(i) % batches.size()];
    adam.zero_grad();
    Tensor loss = nn::cross_entropy(model.forward(b.inputs), b.targets);
    loss.backward();
    adam.step();
    return loss.item();
  };
  bench::run_training_bench("REF-TRANSFORMER", model.parameter_count(), options, train_step,
                            {{"batch", batch}, {"length", length}});
  return 0;
}
