// REF-BAHDANAU: one training step of the reference workload, with attend.
//
// The same model is in bench/pytorch/ref_bahdanau.py, for the side-by-side comparison
// (bench/compare_pytorch.sh runs both): source vocabulary 40, target 16, embeddings 32, a
// bidirectional GRU encoder (64 per direction), a GRUCell decoder (64) with additive
// attention (64), teacher forcing, source length 25, target length 12, batch 64,
// cross-entropy, Adam. One step = zero_grad + forward + loss + backward + Adam update;
// the median of 50 steps after 10 warm-up steps is reported.
//
// --batch, --source-length and --target-length change the shape of the batches (defaults:
// the reference 64, 25 and 12; bench/scaling.sh varies them), the model stays the same.
#include "bench/ref_harness.h"

using namespace attend;

namespace {

constexpr Index kSrcVocab = 40, kTgtVocab = 16, kEmbedding = 32, kHidden = 64, kAttention = 64;

struct Seq2SeqAttention : nn::Module {
  nn::Embedding src_emb{kSrcVocab, kEmbedding}, tgt_emb{kTgtVocab, kEmbedding};
  nn::GRU encoder{kEmbedding, kHidden, /*bidirectional=*/true};
  nn::Linear init{2 * kHidden, kHidden};
  nn::Linear w_q{kHidden, kAttention, false}, w_k{2 * kHidden, kAttention}, v{kAttention, 1, false};
  nn::GRUCell cell{kEmbedding + 2 * kHidden, kHidden};
  nn::Linear out{kHidden + 2 * kHidden + kEmbedding, kTgtVocab};

  Seq2SeqAttention() {
    register_module("src_emb", src_emb);
    register_module("tgt_emb", tgt_emb);
    register_module("encoder", encoder);
    register_module("init", init);
    register_module("w_q", w_q);
    register_module("w_k", w_k);
    register_module("v", v);
    register_module("cell", cell);
    register_module("out", out);
  }

  // src [B, S], tgt_in [B, T] -> logits [B, T, V]
  Tensor forward(const Tensor& src, const Tensor& tgt_in) {
    nn::GRUOutput enc = encoder(src_emb(src));  // output [B,S,2H], h_n [2,B,H]
    Tensor h_n = enc.h_n;
    Tensor s =
        tanh(init(concat({squeeze(slice(h_n, 0, 0, 1), 0), squeeze(slice(h_n, 0, 1, 2), 0)}, -1)));
    Tensor keys = w_k(enc.output);  // [B,S,A], once per batch
    Tensor emb = tgt_emb(tgt_in);   // [B,T,E]
    std::vector<Tensor> logits;
    for (Index t = 0; t < tgt_in.size(1); ++t) {
      // v^T tanh(keys + W_q s) as one op (nn/additive_score.h): the same bits as
      // squeeze(v(tanh(keys + unsqueeze(w_q(s), 1))), -1), PyTorch's formula.
      Tensor e = squeeze(nn::additive_score(unsqueeze(w_q(s), 1), keys, v.weight), 1);  // [B,S]
      Tensor alpha = softmax(e, -1);
      Tensor ctx = squeeze(matmul(unsqueeze(alpha, 1), enc.output), 1);  // [B,2H]
      Tensor y = squeeze(slice(emb, 1, t, t + 1), 1);                    // [B,E]
      s = cell(concat({y, ctx}, -1), s);
      logits.push_back(out(concat({s, ctx, y}, -1)));
    }
    return stack(logits, 1);
  }
};

struct Batch {
  Tensor src, tgt_in, tgt;
};

struct Options : bench::RefOptions {
  int batch = flag(batch, "batch", 64, "sequences per batch", app::between(1, 1024));
  int source_length =
      flag(source_length, "source-length", 25, "source tokens per sequence", app::between(1, 1024));
  int target_length =
      flag(target_length, "target-length", 12, "target tokens per sequence", app::between(1, 1024));
};

}  // namespace

int main(int argc, char** argv) {
  const auto options = bench::parse_ref_options<Options>(argc, argv);
  const Index batch = options.batch, src_len = options.source_length,
              tgt_len = options.target_length;
  manual_seed(0);
  Seq2SeqAttention model;
  optim::Adam adam(model.parameters(), {.lr = 1e-3});
  Generator gen(1);
  std::vector<Batch> batches;
  for (int b = 0; b < 8; ++b) {
    NDArray src = NDArray::empty({batch, src_len}, kInt64),
            tgt = NDArray::empty({batch, tgt_len}, kInt64);
    for (auto& x : src.span<std::int64_t>()) x = gen.randint(kSrcVocab);
    for (auto& x : tgt.span<std::int64_t>()) x = 1 + gen.randint(kTgtVocab - 1);
    NDArray tgt_in = NDArray::zeros({batch, tgt_len}, kInt64);  // BOS = 0, then gold tokens
    slice_assign(tgt_in, slice(tgt, 1, 0, tgt_len - 1), 1, 1);
    batches.push_back({Tensor(src), Tensor(tgt_in), Tensor(tgt)});
  }
  const auto train_step = [&](int i) {
    const Batch& b = batches[static_cast<std::size_t>(i) % batches.size()];
    adam.zero_grad();
    Tensor loss = nn::cross_entropy(model.forward(b.src, b.tgt_in), b.tgt);
    loss.backward();
    adam.step();
    return loss.item();
  };
  bench::run_training_bench(
      "REF-BAHDANAU", model.parameter_count(), options, train_step,
      {{"batch", batch}, {"source_length", src_len}, {"target_length", tgt_len}});
  return 0;
}
