#include "nn/activation.h"

namespace attend::nn {

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen) {
  if (p < 0 || p >= 1) fail("dropout: p must be in [0, 1), got {}", p);
  if (!training || p == 0) return x;
  NDArray mask = NDArray::empty(x.shape(), x.dtype());
  const double keep = 1 - p;
  dispatch_float(x.dtype(), "dropout", [&]<class T>() {
    const T scale = static_cast<T>(1 / keep);
    for (T& m : mask.span<T>()) m = gen.bernoulli(keep) ? scale : T(0);
  });
  return x * Tensor(mask);
}

Dropout::Dropout(double probability, Generator& gen) : p(probability), gen_(&gen) {
  if (p < 0 || p >= 1) fail("Dropout: p must be in [0, 1), got {}", p);
}

std::string Dropout::describe() const {
  return fmt::format("Dropout(p={:g})", p);
}

}  // namespace attend::nn
