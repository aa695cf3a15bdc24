#include "nn/optim/sgd.h"

#include <cmath>

#include "nn/optim/state.h"

namespace attend::optim {

SGD::SGD(std::vector<Tensor> parameters, const SGDOptions& options)
    : Optimizer(std::move(parameters), options.lr),
      options_(options),
      momentum_buffers_(parameters_.size()) {
  const SGDOptions& o = options;
  if (!(o.momentum >= 0) || !std::isfinite(o.momentum))
    fail("SGD: momentum must be finite and >= 0, got {}", o.momentum);
  if (!std::isfinite(o.dampening)) fail("SGD: dampening must be finite, got {}", o.dampening);
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay))
    fail("SGD: weight_decay must be finite and >= 0, got {}", o.weight_decay);
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    fail(
        "SGD: nesterov momentum needs momentum > 0 and dampening == 0, got momentum {} and "
        "dampening {}",
        o.momentum, o.dampening);
}

// The rule in sgd.h (PyTorch's torch.optim.SGD), one fused loop per case:
//   d = g + wd p;   buf = momentum buf + (1 - dampening) d   (buf = d on the first step)
//   p -= lr (nesterov ? d + momentum buf : buf)
void SGD::step() {
  const SGDOptions& o = options_;
  const std::vector<NDArray> grads = gradients("SGD.step");
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (grads[i].defined() && momentum_buffers_[i].defined())
      check_buffer(i, momentum_buffers_[i], "momentum_buffer", "SGD.step");

  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const NDArray& grad = grads[i];
    if (!grad.defined()) continue;
    NDArray& value = parameters_[i].data();

    // On the first step the buffer starts as g itself. A zero buffer with keep = 0 and
    // take = 1 gives exactly that (0 * 0 + 1 * g == g) without a separate loop.
    bool first = false;
    if (o.momentum != 0) {
      first = !momentum_buffers_[i].defined();
      if (first) momentum_buffers_[i] = NDArray::zeros_like(value);
    }

    dispatch_float(value.dtype(), "SGD.step", [&]<class T>() {
      T* p = value.data<T>();
      const T* g = grad.data<T>();
      const Index n = value.numel();
      const T lr = static_cast<T>(learning_rate_);
      const T wd = static_cast<T>(o.weight_decay);
      // p, g and buf are separate arrays, so the loops may run several k at once (simd).
      if (o.momentum == 0) {
#pragma omp simd
        for (Index k = 0; k < n; ++k) p[k] -= lr * (g[k] + wd * p[k]);
        return;
      }
      T* buf = momentum_buffers_[i].data<T>();
      const T momentum = static_cast<T>(o.momentum);
      const T keep = first ? T(0) : momentum;
      const T take = first ? T(1) : static_cast<T>(1 - o.dampening);
      if (o.nesterov) {
#pragma omp simd
        for (Index k = 0; k < n; ++k) {
          const T d = g[k] + wd * p[k];
          buf[k] = keep * buf[k] + take * d;
          p[k] -= lr * (d + momentum * buf[k]);
        }
      } else {
#pragma omp simd
        for (Index k = 0; k < n; ++k) {
          const T d = g[k] + wd * p[k];
          buf[k] = keep * buf[k] + take * d;
          p[k] -= lr * buf[k];
        }
      }
    });
  }
  ++steps_;
}

StateDict SGD::state() const {
  StateDict out;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (momentum_buffers_[i].defined())
      out.emplace_back(state_name(i, "momentum_buffer"), momentum_buffers_[i].clone());
  return out;
}

void SGD::load_state(const StateDict& state, std::int64_t steps_taken) {
  check_steps_taken(steps_taken, "SGD.load_state");
  std::vector<std::string_view> kept;
  if (options_.momentum != 0) kept.push_back("momentum_buffer");
  StateReader reader(state, parameters_, "SGD", kept);
  std::vector<NDArray> buffers(parameters_.size());
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (reader.has_state(i)) buffers[i] = reader.buffer(i, "momentum_buffer");
  momentum_buffers_ = std::move(buffers);
  steps_ = steps_taken;
}

}  // namespace attend::optim
