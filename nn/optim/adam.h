// Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019), exactly as PyTorch's
// torch.optim.Adam and torch.optim.AdamW (without amsgrad).
//
// Adam keeps two running averages per parameter: m, of the gradient (the direction), and
// v, of the squared gradient (its typical size). Dividing one by the square root of the
// other gives every parameter a step of about lr, whatever the scale of its gradient.
// Both averages start at 0 and so underestimate early on; the bias corrections
// 1 - beta^t undo that (t counts this parameter's updates, starting at 1).
//
// The two differ only in weight decay. Adam adds it to the gradient (an L2 penalty), so
// it is divided by sqrt(v) like the rest of the gradient and parameters with large
// gradients are barely decayed. AdamW shrinks the parameter directly, decoupled from the
// gradient statistics, which is what "weight decay" is meant to do.
//
//   optim::Adam adam(model.parameters(), {.lr = 1e-3});
//   optim::AdamW adamw(model.parameters(), {.lr = 3e-4, .weight_decay = 0.1});
#pragma once

#include "nn/optim/optimizer.h"

namespace attend::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;       // decay of the first-moment average m
  double beta2 = 0.999;     // decay of the second-moment average v
  double eps = 1e-8;        // added to sqrt(v_hat): keeps the step finite where v is 0
  double weight_decay = 0;  // L2: added to the gradient as weight_decay * p
};

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;  // decoupled: p = p - lr * weight_decay * p before the update
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<Tensor> parameters, const AdamOptions& options = {});

  void step() override;
  // For each parameter updated so far: "<i>.step" (its update count t, a 0-d float64 array
  // like PyTorch's step tensor), "<i>.exp_avg" (m) and "<i>.exp_avg_sq" (v).
  StateDict state() const override;
  void load_state(const StateDict& state, std::int64_t steps_taken) override;

  const AdamOptions& options() const { return options_; }

 protected:
  // AdamW's constructor: the same rule with the weight decay decoupled.
  Adam(std::vector<Tensor> parameters, const AdamOptions& options, bool decoupled_weight_decay,
       std::string_view name);

 private:
  AdamOptions options_;
  bool decoupled_weight_decay_;
  std::string name_;  // "Adam" or "AdamW", for error messages
  // Per parameter, created on its first update: t, m and v.
  std::vector<std::int64_t> updates_;
  std::vector<NDArray> exp_avg_;
  std::vector<NDArray> exp_avg_sq_;
};

class AdamW : public Adam {
 public:
  explicit AdamW(std::vector<Tensor> parameters, const AdamWOptions& options = {});
};

}  // namespace attend::optim
