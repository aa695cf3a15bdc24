#include "nn/optim/adam.h"

#include <cmath>

#include "nn/optim/state.h"

namespace attend::optim {

Adam::Adam(std::vector<Tensor> parameters, const AdamOptions& options)
    : Adam(std::move(parameters), options, false, "Adam") {}

AdamW::AdamW(std::vector<Tensor> parameters, const AdamWOptions& options)
    : Adam(std::move(parameters),
           AdamOptions{.lr = options.lr,
                       .beta1 = options.beta1,
                       .beta2 = options.beta2,
                       .eps = options.eps,
                       .weight_decay = options.weight_decay},
           true, "AdamW") {}

Adam::Adam(std::vector<Tensor> parameters, const AdamOptions& options, bool decoupled_weight_decay,
           std::string_view name)
    : Optimizer(std::move(parameters), options.lr),
      options_(options),
      decoupled_weight_decay_(decoupled_weight_decay),
      name_(name),
      updates_(parameters_.size(), 0),
      exp_avg_(parameters_.size()),
      exp_avg_sq_(parameters_.size()) {
  const AdamOptions& o = options;
  if (!(o.beta1 >= 0 && o.beta1 < 1)) fail("{}: beta1 must be in [0, 1), got {}", name_, o.beta1);
  if (!(o.beta2 >= 0 && o.beta2 < 1)) fail("{}: beta2 must be in [0, 1), got {}", name_, o.beta2);
  if (!(o.eps >= 0) || !std::isfinite(o.eps))
    fail("{}: eps must be finite and >= 0, got {}", name_, o.eps);
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay))
    fail("{}: weight_decay must be finite and >= 0, got {}", name_, o.weight_decay);
}

// Kingma & Ba 2015, Algorithm 1, with PyTorch's placement of eps, for one parameter p with
// gradient g at its t-th update (t = 1, 2, ...):
//
//   g     = g + wd * p                  (Adam only: L2 weight decay)
//   p     = p - lr * wd * p             (AdamW only: Loshchilov & Hutter 2019, Algorithm 2,
//                                        line 12; PyTorch's decay eta_t * lambda is lr * wd)
//   m     = beta1 * m + (1 - beta1) * g
//   v     = beta2 * v + (1 - beta2) * g^2
//   m_hat = m / (1 - beta1^t)            (bias corrections)
//   v_hat = v / (1 - beta2^t)
//   p     = p - lr * m_hat / (sqrt(v_hat) + eps)
//
// The loop computes the last line as p - (lr / (1 - beta1^t)) * m / (sqrt(v) /
// sqrt(1 - beta2^t) + eps), the same arithmetic PyTorch does.
void Adam::step() {
  const AdamOptions& o = options_;
  const std::string op = name_ + ".step";
  const std::vector<NDArray> grads = gradients(op);
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!grads[i].defined() || !exp_avg_[i].defined()) continue;
    check_buffer(i, exp_avg_[i], "exp_avg", op);
    check_buffer(i, exp_avg_sq_[i], "exp_avg_sq", op);
  }

  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const NDArray& grad = grads[i];
    if (!grad.defined()) continue;
    NDArray& value = parameters_[i].data();
    if (!exp_avg_[i].defined()) {  // the first update of this parameter
      exp_avg_[i] = NDArray::zeros_like(value);
      exp_avg_sq_[i] = NDArray::zeros_like(value);
    }
    const std::int64_t t = ++updates_[i];

    const double step_size = learning_rate_ / (1 - std::pow(o.beta1, static_cast<double>(t)));
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(o.beta2, static_cast<double>(t)));
    const double l2 = decoupled_weight_decay_ ? 0.0 : o.weight_decay;
    const double shrink = decoupled_weight_decay_ ? 1 - learning_rate_ * o.weight_decay : 1.0;

    dispatch_float(value.dtype(), op, [&]<class T>() {
      T* p = value.data<T>();
      const T* g = grad.data<T>();
      T* m = exp_avg_[i].data<T>();
      T* v = exp_avg_sq_[i].data<T>();
      const Index n = value.numel();
      const T beta1 = static_cast<T>(o.beta1), beta2 = static_cast<T>(o.beta2);
      const T one_minus_beta1 = static_cast<T>(1 - o.beta1);
      const T one_minus_beta2 = static_cast<T>(1 - o.beta2);
      const T eps = static_cast<T>(o.eps), wd = static_cast<T>(l2);
      const T decay = static_cast<T>(shrink), lr_t = static_cast<T>(step_size);
      const T bc2_sqrt = static_cast<T>(bias_correction2_sqrt);
      // One fused pass; p, g, m and v are separate arrays, so it may run several k at once.
#pragma omp simd
      for (Index k = 0; k < n; ++k) {
        const T gk = g[k] + wd * p[k];
        m[k] = beta1 * m[k] + one_minus_beta1 * gk;
        v[k] = beta2 * v[k] + one_minus_beta2 * gk * gk;
        p[k] = decay * p[k] - lr_t * m[k] / (std::sqrt(v[k]) / bc2_sqrt + eps);
      }
    });
  }
  ++steps_;
}

StateDict Adam::state() const {
  StateDict out;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!exp_avg_[i].defined()) continue;
    out.emplace_back(state_name(i, "step"),
                     NDArray::scalar(static_cast<double>(updates_[i]), kFloat64));
    out.emplace_back(state_name(i, "exp_avg"), exp_avg_[i].clone());
    out.emplace_back(state_name(i, "exp_avg_sq"), exp_avg_sq_[i].clone());
  }
  return out;
}

void Adam::load_state(const StateDict& state, std::int64_t steps_taken) {
  check_steps_taken(steps_taken, name_ + ".load_state");
  StateReader reader(state, parameters_, name_, {"step", "exp_avg", "exp_avg_sq"});
  std::vector<std::int64_t> updates(parameters_.size(), 0);
  std::vector<NDArray> exp_avg(parameters_.size()), exp_avg_sq(parameters_.size());
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!reader.has_state(i)) continue;
    updates[i] = reader.count(i, "step");
    exp_avg[i] = reader.buffer(i, "exp_avg");
    exp_avg_sq[i] = reader.buffer(i, "exp_avg_sq");
  }
  updates_ = std::move(updates);
  exp_avg_ = std::move(exp_avg);
  exp_avg_sq_ = std::move(exp_avg_sq);
  steps_ = steps_taken;
}

}  // namespace attend::optim
