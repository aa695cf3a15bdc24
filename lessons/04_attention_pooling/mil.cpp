// (b) Attention-based deep multiple-instance learning (Ilse, Tomczak and Welling, ICML 2018).
//
// A bag X = {x_1, ..., x_K} is classified in three steps (their "embedding-level" approach;
// the paper's equation numbers could not be checked, so formulas are cited by name):
//   1. every instance is encoded on its own:          h_k = f(x_k)  in R^M
//   2. a pooling that ignores the order of instances: z = pool(h_1, ..., h_K)
//   3. a classifier gives the bag's logit:            theta(X) = sigmoid(g(z))
// The poolings compared here (gated is attention with a gate):
//   mean        z = (1/K) sum_k h_k
//   max         z_m = max_k h_km
//   logsumexp   z_m = (1/r) log((1/K) sum_k exp(r h_km))   (a smooth max; r = sharpness, the
//               form of Pinheiro and Collobert 2015)
//   attention   z = sum_k a_k h_k,  a_k = softmax_k(w^T tanh(V h_k))     (attention-based pooling)
//   gated       a_k = softmax_k(w^T (tanh(V h_k) * sigm(U h_k)))          (gated attention)
// Padding slots (bags have different sizes) are kept out of every pooling by the mask.
#include <cmath>
#include <limits>

#include "lesson.h"

namespace attend::lesson04 {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The mask in h's dtype, shaped [B, T, 1] so that it broadcasts over the embedding axis.
Tensor mask_for(const Tensor& h, const Tensor& mask) {
  if (mask.ndim() != 2 || h.ndim() != 3 || mask.size(0) != h.size(0) || mask.size(1) != h.size(1))
    fail("MIL pooling: need embeddings [B, T, M] and a mask [B, T], got {} and {}", h.shape(),
         mask.shape());
  Tensor m = mask.dtype() == h.dtype() ? mask : to_dtype(mask, h.dtype());
  return unsqueeze(m, 2);
}

// 1 at padding slots, [B, T, 1]: where masked_fill puts -inf.
Tensor padding_of(const Tensor& mask3) {
  return eq(mask3, zeros({}, mask3.dtype()));
}

// The number of real instances K of each bag, [B, 1].
Tensor bag_sizes(const Tensor& mask3) {
  return sum(mask3, 1);
}

}  // namespace

std::string pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kMean:
      return "mean";
    case Pooling::kMax:
      return "max";
    case Pooling::kLogSumExp:
      return "logsumexp";
    case Pooling::kAttention:
      return "attention";
    case Pooling::kGatedAttention:
      return "gated";
  }
  return "?";
}

Pooling parse_pooling(const std::string& name) {
  for (Pooling p : {Pooling::kMean, Pooling::kMax, Pooling::kLogSumExp, Pooling::kAttention,
                    Pooling::kGatedAttention})
    if (pooling_name(p) == name) return p;
  fail("unknown pooling '{}': use mean, max, logsumexp, attention or gated", name);
}

Tensor mean_pool(const Tensor& h, const Tensor& mask) {
  Tensor m = mask_for(h, mask);
  return sum(h * m, 1) / bag_sizes(m);
}

Tensor max_pool(const Tensor& h, const Tensor& mask) {
  // Padding becomes -inf, so it never wins; max's gradient goes to the winner only.
  return max(masked_fill(h, padding_of(mask_for(h, mask)), -kInfinity), 1);
}

Tensor logsumexp_pool(const Tensor& h, const Tensor& mask, double sharpness) {
  if (!(sharpness > 0)) fail("logsumexp_pool: the sharpness r must be positive, got {}", sharpness);
  Tensor m = mask_for(h, mask);
  // exp(-inf) = 0: padding adds nothing to the sum.
  Tensor lse = logsumexp(masked_fill(h * sharpness, padding_of(m), -kInfinity), 1);
  return (lse - log(bag_sizes(m))) * (1.0 / sharpness);
}

NDArray max_pool_shares(const NDArray& h, const NDArray& mask) {
  const NDArray hv = h.to(kFloat64), mv = mask.to(kFloat64);
  const Index B = hv.size(0), T = hv.size(1), M = hv.size(2);
  NDArray shares = NDArray::zeros({B, T}, kFloat64);
  const double* x = hv.data<double>();
  const double* keep = mv.data<double>();
  double* out = shares.data<double>();
  for (Index b = 0; b < B; ++b)
    for (Index m = 0; m < M; ++m) {
      Index best = -1;
      for (Index k = 0; k < T; ++k) {
        if (keep[b * T + k] == 0) continue;
        if (best < 0 || x[(b * T + k) * M + m] > x[(b * T + best) * M + m]) best = k;
      }
      if (best >= 0) out[b * T + best] += 1.0 / static_cast<double>(M);
    }
  return shares;
}

NDArray logsumexp_pool_shares(const NDArray& h, const NDArray& mask, double sharpness) {
  // d z_m / d h_km = softmax_k(r h_km): how much instance k moves dimension m of z.
  NDArray hv = h.to(kFloat64), mv = mask.to(kFloat64);
  const Index M = hv.size(2);
  NDArray padding = eq(unsqueeze(mv, 2), NDArray::scalar(0, kFloat64));
  NDArray soft = softmax(masked_fill(hv * sharpness, padding, -kInfinity), 1);  // [B, T, M]
  return sum(soft, 2) / static_cast<double>(M);
}

MilModel::MilModel(Pooling pooling_kind, const MilSizes& sizes_, Generator& gen)
    : pooling(pooling_kind),
      sizes(sizes_),
      encoder_hidden(sizes_.input, sizes_.hidden, true, gen),
      encoder_out(sizes_.hidden, sizes_.embedding, true, gen),
      // The paper writes w^T tanh(V h) without biases; a bias in w would cancel in the softmax.
      attention_v(sizes_.embedding, sizes_.attention, false, gen),
      attention_u(sizes_.embedding, sizes_.attention, false, gen),
      attention_w(sizes_.attention, 1, false, gen),
      classifier(sizes_.embedding, 1, true, gen) {
  register_module("encoder_hidden", encoder_hidden);
  register_module("encoder_out", encoder_out);
  // Only the parts a pooling uses are registered, so that parameter_count() compares the
  // models fairly and the optimizer updates only what is trained.
  if (pooling == Pooling::kAttention || pooling == Pooling::kGatedAttention) {
    register_module("attention_v", attention_v);
    if (pooling == Pooling::kGatedAttention) register_module("attention_u", attention_u);
    register_module("attention_w", attention_w);
  }
  register_module("classifier", classifier);
}

std::string MilModel::describe() const {
  return fmt::format("MilModel({} pooling, {} -> {} -> {})", pooling_name(pooling), sizes.input,
                     sizes.hidden, sizes.embedding);
}

Tensor MilModel::encode(const Tensor& instances) {
  const Index B = instances.size(0), T = instances.size(1);
  if (instances.numel() != B * T * sizes.input)
    fail("MilModel: instances {} do not hold {} values per instance", instances.shape(),
         sizes.input);
  Tensor x = reshape(instances, {B * T, sizes.input});
  Tensor h = relu(encoder_out(relu(encoder_hidden(x))));  // f(x_k), every instance alone
  return reshape(h, {B, T, sizes.embedding});
}

MilModel::Output MilModel::forward(const Tensor& instances, const Tensor& mask) {
  if (instances.ndim() < 3) fail("MilModel: need instances [B, T, ...], got {}", instances.shape());
  Tensor h = encode(instances);
  Tensor z;
  Output out;
  switch (pooling) {
    case Pooling::kMean: {
      z = mean_pool(h, mask);
      NDArray keep = mask.data().to(kFloat64);
      out.instance_weights = Tensor(keep / sum(keep, 1, true));  // 1/K each
      break;
    }
    case Pooling::kMax:
      z = max_pool(h, mask);
      out.instance_weights = Tensor(max_pool_shares(h.data(), mask.data()));
      break;
    case Pooling::kLogSumExp:
      z = logsumexp_pool(h, mask, sizes.lse_sharpness);
      out.instance_weights =
          Tensor(logsumexp_pool_shares(h.data(), mask.data(), sizes.lse_sharpness));
      break;
    case Pooling::kAttention:
    case Pooling::kGatedAttention: {
      Tensor hidden = tanh(attention_v(h));  // [B, T, L]
      if (pooling == Pooling::kGatedAttention) hidden = hidden * sigmoid(attention_u(h));
      Tensor scores = squeeze(attention_w(hidden), 2);  // [B, T]: w^T tanh(V h_k)
      Tensor a = nn::masked_softmax(scores, mask);      // a_k, 0 at padding
      z = squeeze(matmul(unsqueeze(a, 1), h), 1);       // sum_k a_k h_k, [B, M]
      out.instance_weights = a;
      break;
    }
  }
  out.logits = squeeze(classifier(z), 1);
  return out;
}

}  // namespace attend::lesson04
