#include "nn/loss.h"

#include <cmath>
#include <utility>

#include "autograd/ops.h"
#include "autograd/saved_array.h"
#include "tensor/reduce.h"
#include "tensor/softmax.h"

namespace attend::nn {

namespace {

// Checks cross_entropy's arguments; returns how many positions count (not ignore_index).
Index counted_targets(const Tensor& logits, const Tensor& targets,
                      const CrossEntropyOptions& options) {
  if (logits.ndim() < 1)
    fail("cross_entropy: logits must have a class axis, got {}", logits.shape());
  if (targets.dtype() != kInt64)
    fail("cross_entropy: targets must be int64 class indices, got {}", dtype_name(targets.dtype()));
  Shape expected = logits.shape();
  expected.erase(expected.ndim() - 1);
  if (targets.shape() != expected)
    fail("cross_entropy: logits {} need targets of shape {}, got {}", logits.shape(), expected,
         targets.shape());
  if (options.label_smoothing < 0 || options.label_smoothing > 1)
    fail("cross_entropy: label_smoothing must be in [0, 1], got {}", options.label_smoothing);
  const Index classes = logits.size(-1), rows = targets.numel();
  const std::int64_t* t = std::as_const(targets.data()).data<std::int64_t>();
  Index counted = 0;
  for (Index r = 0; r < rows; ++r) {
    if (t[r] == options.ignore_index) continue;
    if (t[r] < 0 || t[r] >= classes)
      fail("cross_entropy: target {} at position {} is not a class in 0..{} (nor ignore_index {})",
           t[r], r, classes - 1, options.ignore_index);
    ++counted;
  }
  return counted;
}

}  // namespace

// For one position with logits z (C classes), target class t and smoothing eps, the
// target distribution is q = (1 - eps) onehot(t) + eps / C, and
//   loss = -sum_c q_c log softmax(z)_c
//   dloss/dz = softmax(z) - q
// With the mean reduction both are divided by the number of counted positions.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& options) {
  const Index counted = counted_targets(logits, targets, options);
  const Index classes = logits.size(-1), rows = targets.numel();
  NDArray logp = log_softmax(logits.data().reshape({rows, classes}), 1);
  const NDArray& target_values = targets.data();
  const std::int64_t* t = target_values.data<std::int64_t>();
  const double eps = options.label_smoothing;
  NDArray per_row = NDArray::zeros({rows}, logits.dtype());
  dispatch_float(logits.dtype(), "cross_entropy", [&]<class T>() {
    const T* lp = logp.data<T>();
    T* out = per_row.data<T>();
    for (Index r = 0; r < rows; ++r) {
      if (t[r] == options.ignore_index) continue;
      T smooth = 0;
      if (eps > 0)
        for (Index c = 0; c < classes; ++c) smooth += lp[r * classes + c];
      out[r] = -static_cast<T>(1 - eps) * lp[r * classes + t[r]] -
               static_cast<T>(eps / classes) * smooth;
    }
  });

  NDArray value;
  double scale = 1;  // d(reduced loss) / d(loss of one row)
  switch (options.reduction) {
    case Reduction::kNone:
      value = per_row.reshape(targets.shape());
      break;
    case Reduction::kSum:
      value = NDArray::scalar(attend::sum(per_row).item(), logits.dtype());
      break;
    case Reduction::kMean:
      scale = counted > 0 ? 1.0 / static_cast<double>(counted) : 0.0;
      value = NDArray::scalar(attend::sum(per_row).item() * scale, logits.dtype());
      break;
  }

  SavedArray tv(targets.data(), "targets");
  const Shape logits_shape = logits.shape();
  const Reduction reduction = options.reduction;
  const Index ignore = options.ignore_index;
  return make_op("cross_entropy", value, {logits}, [=](const NDArray& g) -> Grads {
    NDArray dz = NDArray::empty({rows, classes}, g.dtype());
    const std::int64_t* tp = tv.get().data<std::int64_t>();
    dispatch_float(g.dtype(), "cross_entropy", [&]<class T>() {
      const T* lp = logp.data<T>();
      const T* pg = g.data<T>();
      T* d = dz.data<T>();
      for (Index r = 0; r < rows; ++r) {
        T* row = d + r * classes;
        if (tp[r] == ignore) {
          for (Index c = 0; c < classes; ++c) row[c] = 0;
          continue;
        }
        const T weight = static_cast<T>(reduction == Reduction::kNone ? pg[r] : pg[0] * scale);
        for (Index c = 0; c < classes; ++c) {
          const T q = static_cast<T>(eps / classes) + (c == tp[r] ? static_cast<T>(1 - eps) : T(0));
          row[c] = weight * (std::exp(lp[r * classes + c]) - q);
        }
      }
    });
    return {dz.reshape(logits_shape)};
  });
}

Tensor mse_loss(const Tensor& prediction, const Tensor& target) {
  if (prediction.shape() != target.shape())
    fail("mse_loss: prediction {} and target {} differ in shape", prediction.shape(),
         target.shape());
  Tensor diff = prediction - target;
  return mean(diff * diff);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets) {
  if (logits.shape() != targets.shape())
    fail("binary_cross_entropy_with_logits: logits {} and targets {} differ in shape",
         logits.shape(), targets.shape());
  return mean(relu(logits) - logits * targets + log(1.0 + exp(-abs(logits))));
}

Tensor doubly_stochastic_penalty(const Tensor& alphas, const Tensor& mask) {
  if (alphas.ndim() != 3)
    fail("doubly_stochastic_penalty: alphas must be [B, T, L], got {}", alphas.shape());
  Tensor real_steps = alphas;  // alpha_ti, 0 at padded steps
  if (mask.defined()) {
    if (mask.shape() != Shape{alphas.size(0), alphas.size(1)})
      fail("doubly_stochastic_penalty: alphas {} need a mask [{}, {}], got {}", alphas.shape(),
           alphas.size(0), alphas.size(1), mask.shape());
    real_steps = alphas * unsqueeze(mask, 2);
  }
  Tensor per_region = sum(real_steps, 1);               // sum_t alpha_ti, [B, L]
  Tensor penalty = sum(pow(1.0 - per_region, 2.0), 1);  // sum_i (1 - ...)^2, [B]
  return mean(penalty);
}

}  // namespace attend::nn
