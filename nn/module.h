// Module: the base of every layer and model. A module owns parameters (Tensors that
// require gradients) and child modules, each registered under a name, so that a whole model
// can list its parameters with dotted names ("encoder.gru.weight_ih"), count them, print a
// summary, switch between training and evaluation mode, and be saved to a checkpoint.
//
//   struct MLP : Module {
//     Linear fc1, fc2;
//     MLP() : fc1(784, 256), fc2(256, 10) {
//       register_module("fc1", fc1);
//       register_module("fc2", fc2);
//     }
//     Tensor forward(const Tensor& x) { return fc2(relu(fc1(x))); }
//   };
//
// Children are members (or owned elsewhere) and registered by reference, so modules can
// neither be copied nor moved: a moved module would leave its parent pointing at nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace attend::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every parameter of this module and its descendants, depth first, with dotted names.
  // A tensor held by two modules (a tied weight, see tie_weights in nn/embedding.h) is
  // listed once, under the first name found, as in PyTorch: an optimizer must update it
  // once, a checkpoint stores it once, and parameter_count counts it once.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  Index parameter_count() const;  // number of scalars

  // Training mode (the default) versus evaluation mode: Dropout is active only in training.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  void zero_grad();
  // Converts every parameter, in place, to dtype (kFloat64 for a gradcheck of the model).
  void to(DType dtype);

  // A printable tree: each module's type, its parameters' shapes, and the total count.
  std::string summary() const;
  // The module's kind for summary(), e.g. "Linear(784 -> 256)".
  virtual std::string describe() const { return "Module"; }

 protected:
  // Marks value as a parameter (requires_grad) named `name`; returns it.
  Tensor& register_parameter(const std::string& name, Tensor& value);
  Module& register_module(const std::string& name, Module& child);

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
  void summarise(const std::string& name, int depth, std::string& out) const;

  std::vector<std::pair<std::string, Tensor*>> parameters_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
};

// A module with one tensor in and one tensor out, so that it can sit in a Sequential.
class UnaryModule : public Module {
 public:
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }
};

}  // namespace attend::nn
