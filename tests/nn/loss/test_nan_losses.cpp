// A NaN in the logits must come out of every loss as NaN (not inf, not a finite number), so
// that check_loss_is_finite reports it at the step where it appeared.
#include <cmath>
#include <limits>

#include "support.h"

using namespace attend;
using namespace attend::testing;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("losses: NaN logits give a NaN loss", "[nn]") {
  const Tensor targets = Tensor(ids({1, 0}, {2}));
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    const Tensor all_nan = Tensor(NDArray::full({2, 3}, kNaN, dtype));
    const Tensor one_nan = tensor({0.5, kNaN, -1, 2, 0, 1}, {2, 3}, dtype);
    for (const Tensor& logits : {all_nan, one_nan}) {
      CHECK(std::isnan(nn::cross_entropy(logits, targets).item()));
      CHECK(std::isnan(
          nn::cross_entropy(logits, targets, {.reduction = nn::Reduction::kSum}).item()));
      CHECK(std::isnan(nn::cross_entropy(logits, targets, {.label_smoothing = 0.1}).item()));
      const Tensor per_row =
          nn::cross_entropy(logits, targets, {.reduction = nn::Reduction::kNone});
      CHECK(std::isnan(per_row.data().at({0})));  // row 0 holds a NaN in both cases
      CHECK(std::isnan(nn::mse_loss(logits, zeros({2, 3}, dtype)).item()));
      CHECK(std::isnan(nn::binary_cross_entropy_with_logits(logits, zeros({2, 3}, dtype)).item()));
    }
  }
}

TEST_CASE("losses: a NaN loss stops fit at its step, naming it", "[nn]") {
  Tensor w = tensor({1.0}, kFloat64).requires_grad_();
  optim::SGD sgd({w}, {.lr = 0.1});
  const Tensor targets = Tensor(ids({0}, {1}));
  CHECK_THROWS_WITH(optim::fit(sgd, {.steps = 5},
                               [&](Index step) {
                                 const double poison = step == 3 ? kNaN : 0.0;
                                 Tensor logits = reshape(concat({w, w * 0.0 + poison}, 0), {1, 2});
                                 return nn::cross_entropy(logits, targets);
                               }),
                    Catch::Contains("fit: the loss of step 3 is NaN"));
  CHECK_FALSE(std::isnan(w.data().at({0})));  // the NaN step was checked before it was applied
}
