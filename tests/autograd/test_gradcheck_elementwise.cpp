// gradcheck of every elementwise op of autograd/ops_elementwise.cpp, with broadcasting.
// One test case "gradcheck: <op>" per op, as docs/ops.md names them; see op_cases.h.
#include "op_cases.h"

using namespace attend;
using namespace attend::testing;

TEST_CASE("gradcheck: add", "[autograd][gradcheck]") {
  check_op(
      "add",
      {{"same shape", [](const Inputs& x) { return x[0] + x[1]; }, {{2, 3}, {2, 3}}},
       {"broadcast row and column", [](const Inputs& x) { return x[0] + x[1]; }, {{4, 1}, {3}}}});
}

TEST_CASE("gradcheck: sub", "[autograd][gradcheck]") {
  check_op("sub",
           {{"broadcast", [](const Inputs& x) { return x[0] - x[1]; }, {{2, 3, 4}, {3, 1}}}});
}

TEST_CASE("gradcheck: mul", "[autograd][gradcheck]") {
  check_op("mul", {{"broadcast", [](const Inputs& x) { return x[0] * x[1]; }, {{2, 1, 4}, {3, 1}}},
                   {"by a constant", [](const Inputs& x) { return x[0] * 2.5; }, {{5}}}});
}

TEST_CASE("gradcheck: div", "[autograd][gradcheck]") {
  check_op("div", {{"broadcast",
                    [](const Inputs& x) { return x[0] / x[1]; },
                    {{2, 3}, {3}},
                    OpCase::kAwayFromZero}});
}

TEST_CASE("gradcheck: neg", "[autograd][gradcheck]") {
  check_op("neg", {{"", [](const Inputs& x) { return -x[0]; }, {{3, 2}}}});
}

TEST_CASE("gradcheck: exp", "[autograd][gradcheck]") {
  check_op("exp", {{"", [](const Inputs& x) { return exp(x[0]); }, {{3, 2}}}});
}

TEST_CASE("gradcheck: log", "[autograd][gradcheck]") {
  check_op("log", {{"", [](const Inputs& x) { return log(x[0]); }, {{3, 2}}, OpCase::kPositive}});
}

TEST_CASE("gradcheck: sqrt", "[autograd][gradcheck]") {
  check_op("sqrt", {{"", [](const Inputs& x) { return sqrt(x[0]); }, {{3, 2}}, OpCase::kPositive}});
}

TEST_CASE("gradcheck: abs", "[autograd][gradcheck]") {
  check_op("abs",
           {{"", [](const Inputs& x) { return abs(x[0]); }, {{3, 2}}, OpCase::kAwayFromZero}});
}

TEST_CASE("gradcheck: sin", "[autograd][gradcheck]") {
  check_op("sin", {{"", [](const Inputs& x) { return sin(x[0]); }, {{4}}}});
}

TEST_CASE("gradcheck: cos", "[autograd][gradcheck]") {
  check_op("cos", {{"", [](const Inputs& x) { return cos(x[0]); }, {{4}}}});
}

TEST_CASE("gradcheck: tanh", "[autograd][gradcheck]") {
  check_op("tanh", {{"", [](const Inputs& x) { return tanh(x[0]); }, {{3, 2}}}});
}

TEST_CASE("gradcheck: sigmoid", "[autograd][gradcheck]") {
  check_op("sigmoid", {{"", [](const Inputs& x) { return sigmoid(x[0]); }, {{3, 2}}}});
}

TEST_CASE("gradcheck: relu", "[autograd][gradcheck]") {
  check_op("relu",
           {{"", [](const Inputs& x) { return relu(x[0]); }, {{3, 4}}, OpCase::kAwayFromZero}});
}

TEST_CASE("gradcheck: gelu", "[autograd][gradcheck]") {
  check_op("gelu", {{"", [](const Inputs& x) { return gelu(x[0]); }, {{3, 4}}}});
}

TEST_CASE("gradcheck: gelu_tanh", "[autograd][gradcheck]") {
  check_op("gelu_tanh",
           {{"", [](const Inputs& x) { return gelu(x[0], GeluApproximation::tanh); }, {{3, 4}}}});
}

TEST_CASE("gradcheck: pow", "[autograd][gradcheck]") {
  check_op("pow", {{"exponent 3", [](const Inputs& x) { return pow(x[0], 3); }, {{4}}},
                   {"exponent -0.5",
                    [](const Inputs& x) { return pow(x[0], -0.5); },
                    {{4}},
                    OpCase::kPositive}});
}

TEST_CASE("gradcheck: clamp", "[autograd][gradcheck]") {
  check_op("clamp", {{"inside and outside the bounds",
                      [](const Inputs& x) { return clamp(x[0], -1, 1); },
                      {{3, 3}},
                      OpCase::kAwayFromZero}});
}

TEST_CASE("gradcheck: where", "[autograd][gradcheck]") {
  check_op("where", {{"broadcast condition",
                      [](const Inputs& x) {
                        return where(tensor({1, 0, 1}, kFloat64), x[0], x[1]);
                      },
                      {{2, 3}, {2, 3}}}});
}

TEST_CASE("gradcheck: masked_fill", "[autograd][gradcheck]") {
  check_op("masked_fill", {{"mask the last key",
                            [](const Inputs& x) {
                              return masked_fill(x[0], tensor({0, 0, 1}, kFloat64), -3);
                            },
                            {{2, 3}}}});
}

TEST_CASE("gradcheck: to_dtype", "[autograd][gradcheck]") {
  check_op("to_dtype",
           {// Through float32 the value is rounded to 7 digits: a step of 1e-6 would measure the
            // rounding, so this case uses eps 1e-2 (exact for a linear function) and atol 1e-4.
            {"float64 to float32 and back",
             [](const Inputs& x) { return to_dtype(to_dtype(x[0], kFloat32), kFloat64); },
             {{3}},
             OpCase::kAny,
             {.eps = 1e-2, .atol = 1e-4}}});
}
