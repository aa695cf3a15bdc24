#include "nn/sequential.h"

namespace attend::nn {

UnaryModule& Sequential::add(std::unique_ptr<UnaryModule> module) {
  if (!module) fail("Sequential::add: the module is null");
  layers_.push_back(std::move(module));
  register_module(std::to_string(layers_.size() - 1), *layers_.back());
  return *layers_.back();
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (auto& layer : layers_) h = layer->forward(h);
  return h;
}

}  // namespace attend::nn
