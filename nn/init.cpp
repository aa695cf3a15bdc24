#include "nn/init.h"

#include <cmath>

namespace attend::nn::init {

Tensor uniform(const Shape& shape, double bound, Generator& gen) {
  return Tensor(NDArray::uniform(shape, gen, -bound, bound));
}

Tensor normal(const Shape& shape, double stddev, Generator& gen) {
  return Tensor(NDArray::normal(shape, gen, 0, stddev));
}

double fan_in_bound(Index fan_in) {
  if (fan_in <= 0) fail("init: fan_in must be positive, got {}", fan_in);
  return 1.0 / std::sqrt(static_cast<double>(fan_in));
}

}  // namespace attend::nn::init
