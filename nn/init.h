// Initial values of parameters. The layers follow PyTorch's defaults (documented at each
// layer), so that a model here starts where the same model in PyTorch would.
#pragma once

#include "autograd/tensor.h"
#include "tensor/random.h"

namespace attend::nn::init {

// A new float32 tensor of `shape` drawn from U(-bound, bound).
Tensor uniform(const Shape& shape, double bound, Generator& gen);
// A new float32 tensor of `shape` drawn from N(0, stddev^2).
Tensor normal(const Shape& shape, double stddev, Generator& gen);

// PyTorch's default for Linear and Conv2d weights and biases: kaiming_uniform with
// a = sqrt(5) reduces to U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
double fan_in_bound(Index fan_in);

}  // namespace attend::nn::init
