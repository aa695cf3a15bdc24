// (d) Writing your own op. Every differentiable op, built in or yours, is a forward value
// plus a backward formula handed to make_op (autograd/tensor.h). The backward receives
// g = dL/dy and returns dL/dx = g * dy/dx for each input. A mistake there raises no error:
// training just goes wrong, quietly. gradcheck is how you find out.
//
// What a backward reads from the forward (here y, or the inputs) is kept as a SavedArray
// (autograd/saved_array.h), as the library's own ops keep it: if the array is changed in place
// before backward() (x.data().set(...), an optimizer step), backward() stops with "backward of
// softplus: its saved input [2,3] was modified in place ..." instead of silently computing a
// wrong gradient from the new values. A plain NDArray captured in the lambda would not notice.
#include <algorithm>
#include <cmath>

#include "lesson.h"

namespace attend::lesson02 {

// y = 1 / (1 + e^-x).  dy/dx = e^-x / (1 + e^-x)^2 = y (1 - y)
Tensor sigmoid_forgetting_one_minus_y(const Tensor& x) {
  NDArray y = sigmoid(x.data());
  return make_op("sigmoid_wrong", y, {x}, [y = SavedArray(y, "output")](const NDArray& g) -> Grads {
    return {map(g, y, [](auto g, auto y) { return g * y; })};  // BUG: the (1 - y) is missing
  });
}

Tensor sigmoid_custom(const Tensor& x) {
  NDArray y = sigmoid(x.data());  // saved for backward: the derivative is written with y
  return make_op("sigmoid_custom", y, {x},
                 [y = SavedArray(y, "output")](const NDArray& g) -> Grads {
                   return {map(g, y, [](auto g, auto y) { return g * y * (1 - y); })};
                 });
}

GradcheckResult gradcheck_unary(Tensor (*op)(const Tensor&), std::uint64_t seed) {
  Generator gen(seed);
  Tensor x = randn({2, 3}, gen, kFloat64).requires_grad_();
  return gradcheck([op](const std::vector<Tensor>& in) { return op(in[0]); }, {x});
}

// ---- exercise reference solutions -------------------------------------------------------

// y = log(1 + e^x).  dy/dx = e^x / (1 + e^x) = 1 / (1 + e^-x) = sigmoid(x)
Tensor softplus_reference(const Tensor& x) {
  NDArray xv = x.data();
  // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): the same number, but e^x cannot overflow.
  NDArray y = map(
      xv, [](auto v) { return std::max(v, decltype(v)(0)) + std::log1p(std::exp(-std::abs(v))); });
  return make_op("softplus", y, {x}, [xv = SavedArray(xv, "input")](const NDArray& g) -> Grads {
    return {g * sigmoid(xv)};
  });
}

// z = a * b.  dz/da = b, dz/db = a. When a or b was broadcast, each of its elements was
// used at several positions of z, so its gradient is summed back to its shape (sum_to).
Tensor mul_reference(const Tensor& a, const Tensor& b) {
  const NDArray av = a.data(), bv = b.data();
  return make_op("mul_reference", av * bv, {a, b},
                 [av = SavedArray(av, "input #0"),
                  bv = SavedArray(bv, "input #1")](const NDArray& g) -> Grads {
                   return {sum_to(g * bv, av.shape()), sum_to(g * av, bv.shape())};
                 });
}

}  // namespace attend::lesson02
