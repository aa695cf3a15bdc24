// Sequential: unary modules applied one after the other. It owns them.
//
//   Sequential mlp;
//   mlp.add(std::make_unique<Linear>(784, 256));
//   mlp.add(std::make_unique<ReLU>());
//   mlp.add(std::make_unique<Linear>(256, 10));
//   Tensor logits = mlp(x);
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"

namespace attend::nn {

class Sequential : public UnaryModule {
 public:
  // Appends a module; its parameters are named "<index>.<name>" ("0.weight").
  UnaryModule& add(std::unique_ptr<UnaryModule> module);
  Tensor forward(const Tensor& x) override;
  std::size_t size() const { return layers_.size(); }
  UnaryModule& operator[](std::size_t i);  // a layer; an i past the end is an Error
  std::string describe() const override { return "Sequential"; }

 private:
  std::vector<std::unique_ptr<UnaryModule>> layers_;
};

}  // namespace attend::nn
