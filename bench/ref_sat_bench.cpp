// REF-SAT: one training step of a small Show, Attend and Tell captioner, with attend.
//
// The same model is in bench/pytorch/ref_sat.py, for the side-by-side comparison
// (bench/compare_pytorch.sh runs both): images 3x64x64 through 3x [conv3x3 + ReLU +
// maxpool2] (32, 64, 64 channels) to an 8x8 grid of 64 regions of 64 features; an
// LSTMCell decoder (128) started from the mean region (f_init); additive attention (64);
// the gate beta = sigmoid(f_beta(h)); the deep output layer L_o(E y + L_h h + L_z z)
// (Xu et al. 2015, eq. 7); cross-entropy plus the doubly stochastic regulariser
// sum_i (1 - sum_t alpha_ti)^2 (lambda 1, averaged over the batch); caption length 8,
// vocabulary 24, embedding 32, batch 32, Adam.
#include "bench/ref_harness.h"

using namespace attend;

namespace {

constexpr Index kVocab = 24, kEmbedding = 32, kHidden = 128, kAttention = 64, kFeatures = 64;
constexpr Index kSteps = 8, kBatch = 32;
constexpr double kLambda = 1.0;

struct ShowAttendTell : nn::Module {
  nn::Sequential cnn;
  nn::Embedding emb{kVocab, kEmbedding};
  nn::Linear init_h{kFeatures, kHidden}, init_c{kFeatures, kHidden};
  nn::Linear w_a{kFeatures, kAttention}, w_h{kHidden, kAttention, false}, v{kAttention, 1, false};
  nn::Linear f_beta{kHidden, 1};
  nn::LSTMCell cell{kEmbedding + kFeatures, kHidden};
  nn::Linear l_h{kHidden, kEmbedding}, l_z{kFeatures, kEmbedding}, l_o{kEmbedding, kVocab};

  ShowAttendTell() {
    for (auto [in, out] : {std::pair{3, 32}, {32, 64}, {64, kFeatures}}) {
      cnn.add(std::make_unique<nn::Conv2d>(in, out, 3, 1, 1));
      cnn.add(std::make_unique<nn::ReLU>());
      cnn.add(std::make_unique<nn::MaxPool2d>(2, 2));
    }
    register_module("cnn", cnn);
    register_module("emb", emb);
    register_module("init_h", init_h);
    register_module("init_c", init_c);
    register_module("w_a", w_a);
    register_module("w_h", w_h);
    register_module("v", v);
    register_module("f_beta", f_beta);
    register_module("cell", cell);
    register_module("l_h", l_h);
    register_module("l_z", l_z);
    register_module("l_o", l_o);
  }

  // images [B,3,64,64], captions_in [B,T] -> logits [B,T,V] and alphas [B,T,L]
  std::pair<Tensor, Tensor> forward(const Tensor& images, const Tensor& captions_in) {
    Tensor a = transpose(flatten(cnn(images), 2), 1, 2);  // [B, L=64, D]
    Tensor mean_region = mean(a, 1);
    nn::LSTMState state{tanh(init_h(mean_region)), tanh(init_c(mean_region))};
    Tensor keys = w_a(a);  // [B, L, A], once per batch
    std::vector<Tensor> words = unbind(emb(captions_in), 1);
    std::vector<Tensor> logits, alphas;
    for (Index t = 0; t < captions_in.size(1); ++t) {
      // v^T tanh(keys + W_h h) as one op (nn/additive_score.h): the same bits as
      // squeeze(v(tanh(keys + unsqueeze(w_h(state.h), 1))), -1), PyTorch's formula.
      Tensor e = squeeze(nn::additive_score(unsqueeze(w_h(state.h), 1), keys, v.weight), 1);
      Tensor alpha = softmax(e, -1);
      Tensor z = sigmoid(f_beta(state.h)) * squeeze(matmul(unsqueeze(alpha, 1), a), 1);
      const Tensor& y = words[static_cast<std::size_t>(t)];
      state = cell(concat({y, z}, -1), state);
      logits.push_back(l_o(y + l_h(state.h) + l_z(z)));
      alphas.push_back(alpha);
    }
    return {stack(logits, 1), stack(alphas, 1)};
  }
};

struct Batch {
  Tensor images, captions_in, captions;
};

}  // namespace

int main(int argc, char** argv) {
  const bench::RefOptions options = bench::parse_ref_options(argc, argv);
  manual_seed(0);
  ShowAttendTell model;
  optim::Adam adam(model.parameters(), {.lr = 1e-3});
  Generator gen(1);
  std::vector<Batch> batches;
  for (int b = 0; b < 4; ++b) {
    NDArray captions = NDArray::empty({kBatch, kSteps}, kInt64);
    for (auto& x : captions.span<std::int64_t>()) x = 1 + gen.randint(kVocab - 1);
    NDArray captions_in = NDArray::zeros({kBatch, kSteps}, kInt64);
    slice_assign(captions_in, slice(captions, 1, 0, kSteps - 1), 1, 1);
    batches.push_back(
        {Tensor(NDArray::normal({kBatch, 3, 64, 64}, gen)), Tensor(captions_in), Tensor(captions)});
  }
  bench::run_training_bench("REF-SAT", model.parameter_count(), options, [&](int i) {
    const Batch& b = batches[static_cast<std::size_t>(i) % batches.size()];
    adam.zero_grad();
    auto [logits, alphas] = model.forward(b.images, b.captions_in);
    Tensor ce = nn::cross_entropy(logits, b.captions);
    Tensor coverage = 1.0 - sum(alphas, 1);                  // [B, L]
    Tensor regulariser = mean(sum(coverage * coverage, 1));  // sum over regions, mean over batch
    Tensor loss = ce + regulariser * kLambda;
    loss.backward();
    adam.step();
    return loss.item();
  });
  return 0;
}
