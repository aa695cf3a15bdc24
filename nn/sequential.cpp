#include "nn/sequential.h"

namespace attend::nn {

UnaryModule& Sequential::add(std::unique_ptr<UnaryModule> module) {
  if (!module) fail("Sequential::add: the module is null");
  layers_.push_back(std::move(module));
  register_module(std::to_string(layers_.size() - 1), *layers_.back());
  return *layers_.back();
}

UnaryModule& Sequential::operator[](std::size_t i) {
  if (i >= layers_.size())
    fail("Sequential[{}]: there is no layer {}; the Sequential has {}", i, i, layers_.size());
  return *layers_[i];
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    try {
      h = layers_[i]->forward(h);
    } catch (const Error& e) {  // say which layer refused its input
      fail("Sequential: layer {} ({}) on input {}: {}", i, layers_[i]->describe(), h.shape(),
           e.what());
    }
  }
  return h;
}

}  // namespace attend::nn
