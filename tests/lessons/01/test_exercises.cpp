// Exercise checks for docs/01_tensors.md. Each test passes with the reference solution in
// lessons/01_tensors/lesson.cpp, and checks a property that any correct solution has: put
// your own code in the reference function's place and run `ctest --test-dir build -L lesson01`.
#include "lessons/01_tensors/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson01;

TEST_CASE("exercise check: softmax from max, exp, sum and div", "[lesson01]") {
  Generator gen(3);
  NDArray x = NDArray::normal({5, 7}, gen, 0, 3, kFloat64);
  for (int axis : {0, 1, -1}) {
    INFO("axis " << axis);
    NDArray y = softmax_reference(x, axis);
    check_close(y, softmax(x, axis), 1e-12);
    Shape ones = x.shape();
    ones[axis < 0 ? axis + 2 : axis] = 1;
    check_close(sum(y, axis, true), NDArray::ones(ones, kFloat64), 1e-12);
  }
  // Large logits: exp(1000) overflows unless the maximum is subtracted first.
  NDArray big = f64({1000, 1001, 1002, -1000, 0, 1000}, {2, 3});
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    NDArray y = softmax_reference(big.to(dtype), 1);
    for (double v : y.to_vector()) CHECK(std::isfinite(v));
    check_close(y.to(kFloat64), softmax(big, 1), 1e-6);
  }
}

TEST_CASE("exercise check: naive_matmul in any loop order", "[lesson01]") {
  // Exercise 4 reorders naive_matmul's loops (i-k-j instead of i-j-k). Whatever the order,
  // the product must stay exact on small integers and keep the shape [M,N].
  NDArray a = NDArray::arange(12, kFloat64).reshape({3, 4});
  NDArray b = NDArray::arange(20, kFloat64).reshape({4, 5}) - 7.0;
  NDArray c = naive_matmul(a, b);
  REQUIRE(c.shape() == Shape{3, 5});
  check_close(c, matmul(a, b), 0.0);
  NDArray single = naive_matmul(f64({2}, {1, 1}), f64({3, 4}, {1, 2}));
  check_close(single, f64({6, 8}, {1, 2}), 0.0);
}
