// Relevance for an encoder-decoder Transformer: see encoder_decoder_relevance.h.
#include "interpret/encoder_decoder_relevance.h"

#include <string_view>

#include "interpret/relevance.h"
#include "interpret/rollout.h"
#include "tensor/error.h"

namespace attend::interpret {
namespace {

// A row-major float64 matrix: what the rules multiply.
struct DenseMatrix {
  Index rows = 0, columns = 0;
  std::vector<double> v;
  double& operator()(Index i, Index j) { return v[static_cast<std::size_t>(i * columns + j)]; }
  double operator()(Index i, Index j) const { return v[static_cast<std::size_t>(i * columns + j)]; }
};

DenseMatrix to_matrix(const NDArray& a, std::string_view op, std::string_view what) {
  if (a.ndim() != 2) fail("{}: {} must be a matrix, got {}", op, what, a.shape());
  return {a.size(0), a.size(1), a.to_vector()};
}

NDArray to_array(const DenseMatrix& m) {
  return NDArray::from_vector(std::span<const double>(m.v), {m.rows, m.columns});
}

NDArray identity(Index n) {
  NDArray eye = NDArray::zeros({n, n}, kFloat64);
  for (Index i = 0; i < n; ++i) eye.data<double>()[i * n + i] = 1;
  return eye;
}

DenseMatrix product(const DenseMatrix& a, const DenseMatrix& b) {
  DenseMatrix c{a.rows, b.columns,
                std::vector<double>(static_cast<std::size_t>(a.rows * b.columns))};
  for (Index i = 0; i < a.rows; ++i)
    for (Index k = 0; k < a.columns; ++k)
      for (Index j = 0; j < b.columns; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

DenseMatrix transposed(const DenseMatrix& a) {
  DenseMatrix t{a.columns, a.rows, std::vector<double>(a.v.size())};
  for (Index i = 0; i < a.rows; ++i)
    for (Index j = 0; j < a.columns; ++j) t(j, i) = a(i, j);
  return t;
}

// target + addition, as a new array: a copy of the struct (whose NDArrays share memory) is
// left as it was.
void add_to(NDArray& target, const DenseMatrix& addition) {
  DenseMatrix sum = to_matrix(target, "", "");
  for (std::size_t i = 0; i < addition.v.size(); ++i) sum.v[i] += addition.v[i];
  target = to_array(sum);
}

// The shape checks of the rules: Ā must be [rows, columns].
void check_fused(const NDArray& fused, Index rows, Index columns, std::string_view op,
                 std::string_view expected) {
  if (fused.ndim() != 2 || fused.size(0) != rows || fused.size(1) != columns)
    fail("{}: the fused attention must be {} = [{}, {}], got {}", op, expected, rows, columns,
         fused.shape());
}

// Eq. (5) with a gradient, the head mean without one.
NDArray fuse(const NDArray& attention, const NDArray* gradient) {
  return gradient ? gradient_weighted_attention(attention, *gradient) : head_mean(attention);
}

void check_layers(const EncoderDecoderAttention& a) {
  if (a.encoder_self.empty() || a.decoder_self.empty() || a.decoder_self.size() != a.cross.size())
    fail(
        "encoder_decoder_relevance: needs at least one encoder layer and as many decoder "
        "self-attention as cross-attention layers (at least one), got {}, {} and {}",
        a.encoder_self.size(), a.decoder_self.size(), a.cross.size());
  const NDArray& enc = a.encoder_self.front();
  const NDArray& dec = a.decoder_self.front();
  if (enc.ndim() != 3 || dec.ndim() != 3)
    fail("encoder_decoder_relevance: attention must be [H, Tq, Tk], got {} and {}", enc.shape(),
         dec.shape());
}

bool same_layers(const EncoderDecoderAttention& a, const EncoderDecoderAttention& b) {
  auto same = [](const std::vector<NDArray>& x, const std::vector<NDArray>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].shape() != y[i].shape()) return false;
    return true;
  };
  return same(a.encoder_self, b.encoder_self) && same(a.decoder_self, b.decoder_self) &&
         same(a.cross, b.cross);
}

}  // namespace

EncoderDecoderRelevance initial_relevance(Index source_tokens, Index target_tokens) {
  if (source_tokens < 1 || target_tokens < 1)
    fail("initial_relevance: needs at least one source and one target token, got {} and {}",
         source_tokens, target_tokens);
  return {identity(source_tokens), identity(target_tokens),
          NDArray::zeros({target_tokens, source_tokens}, kFloat64)};
}

void apply_encoder_self_attention(EncoderDecoderRelevance& r, const NDArray& fused) {
  const Index S = r.source_source.size(0);
  check_fused(fused, S, S, "apply_encoder_self_attention", "[S, S]");
  const DenseMatrix a = to_matrix(fused, "apply_encoder_self_attention", "Ā");
  add_to(r.source_source, product(a, to_matrix(r.source_source, "", "")));  // eq. (6)
}

void apply_decoder_self_attention(EncoderDecoderRelevance& r, const NDArray& fused) {
  const Index T = r.target_target.size(0);
  check_fused(fused, T, T, "apply_decoder_self_attention", "[T, T]");
  const DenseMatrix a = to_matrix(fused, "apply_decoder_self_attention", "Ā");
  // Both products read the maps from before this block.
  const DenseMatrix tt = product(a, to_matrix(r.target_target, "", ""));
  const DenseMatrix ts = product(a, to_matrix(r.target_source, "", ""));
  add_to(r.target_target, tt);  // eq. (6)
  add_to(r.target_source, ts);  // eq. (7)
}

NDArray normalised_self_relevance(const NDArray& relevance) {
  if (relevance.ndim() != 2 || relevance.size(0) != relevance.size(1))
    fail("normalised_self_relevance: a self-relevance map must be square [T, T], got {}",
         relevance.shape());
  DenseMatrix r = to_matrix(relevance, "normalised_self_relevance", "R");
  for (Index i = 0; i < r.rows; ++i) {
    r(i, i) -= 1;  // R - I
    double row_sum = 0;
    for (Index j = 0; j < r.columns; ++j) row_sum += r(i, j);
    if (row_sum != 0)  // a zero row stays zero (see the header)
      for (Index j = 0; j < r.columns; ++j) r(i, j) /= row_sum;  // the ROW's sum
    r(i, i) += 1;                                                // + I
  }
  return to_array(r);
}

void apply_cross_attention(EncoderDecoderRelevance& r, const NDArray& fused, bool normalise) {
  const Index T = r.target_target.size(0), S = r.source_source.size(0);
  check_fused(fused, T, S, "apply_cross_attention", "[T, S]");
  const NDArray tt = normalise ? normalised_self_relevance(r.target_target) : r.target_target;
  const NDArray ss = normalise ? normalised_self_relevance(r.source_source) : r.source_source;
  const DenseMatrix a = to_matrix(fused, "apply_cross_attention", "Ā");
  // Eq. (10): (R̄^{tt})^T Ā R̄^{ss}. The second co-attention rule would add Ā R^{st} to R^{tt}:
  // R^{st} = 0.
  add_to(r.target_source,
         product(transposed(to_matrix(tt, "", "")), product(a, to_matrix(ss, "", ""))));
}

NDArray head_mean(const NDArray& attention) {
  if (attention.ndim() != 3 || attention.size(0) < 1)
    fail("head_mean: attention must be [H, Tq, Tk] with H >= 1, got {}", attention.shape());
  const Index heads = attention.size(0), cells = attention.size(1) * attention.size(2);
  const std::vector<double> a = attention.to_vector();
  NDArray mean = NDArray::zeros({attention.size(1), attention.size(2)}, kFloat64);
  double* m = mean.data<double>();
  for (Index h = 0; h < heads; ++h)
    for (Index c = 0; c < cells; ++c) m[c] += a[static_cast<std::size_t>(h * cells + c)] / heads;
  return mean;
}

EncoderDecoderRelevance encoder_decoder_relevance(const EncoderDecoderAttention& attention,
                                                  const EncoderDecoderAttention& gradients) {
  check_layers(attention);
  const bool weighted = !gradients.encoder_self.empty() || !gradients.decoder_self.empty() ||
                        !gradients.cross.empty();
  if (weighted && !same_layers(attention, gradients))
    fail(
        "encoder_decoder_relevance: the gradients must have the attention's layers and shapes "
        "({} + {} + {} maps of attention, {} + {} + {} of gradients)",
        attention.encoder_self.size(), attention.decoder_self.size(), attention.cross.size(),
        gradients.encoder_self.size(), gradients.decoder_self.size(), gradients.cross.size());
  const Index S = attention.encoder_self.front().size(1);
  const Index T = attention.decoder_self.front().size(1);
  EncoderDecoderRelevance r = initial_relevance(S, T);
  for (std::size_t l = 0; l < attention.encoder_self.size(); ++l)
    apply_encoder_self_attention(
        r, fuse(attention.encoder_self[l], weighted ? &gradients.encoder_self[l] : nullptr));
  for (std::size_t l = 0; l < attention.decoder_self.size(); ++l) {
    apply_decoder_self_attention(
        r, fuse(attention.decoder_self[l], weighted ? &gradients.decoder_self[l] : nullptr));
    apply_cross_attention(r, fuse(attention.cross[l], weighted ? &gradients.cross[l] : nullptr));
  }
  return r;
}

NDArray encoder_decoder_rollout(const EncoderDecoderAttention& attention) {
  check_layers(attention);
  const DenseMatrix ss = to_matrix(attention_rollout(attention.encoder_self), "", "");
  const DenseMatrix tt = to_matrix(attention_rollout(attention.decoder_self), "", "");
  const DenseMatrix last = to_matrix(head_mean(attention.cross.back()), "", "");
  if (last.rows != tt.rows || last.columns != ss.rows)
    fail(
        "encoder_decoder_rollout: the last cross-attention {} does not fit {} target and {} "
        "source tokens",
        attention.cross.back().shape(), tt.rows, ss.rows);
  return to_array(product(transposed(tt), product(last, ss)));
}

}  // namespace attend::interpret
