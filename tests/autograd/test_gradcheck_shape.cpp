// gradcheck of the shape, indexing and matrix-product ops (autograd/ops_shape.cpp,
// ops_index.cpp, ops_matmul.cpp), including batched and broadcast matmul.
// One test case "gradcheck: <op>" per op, as docs/ops.md names them; see op_cases.h.
#include "op_cases.h"

using namespace attend;
using namespace attend::testing;

TEST_CASE("gradcheck: reshape", "[autograd][gradcheck]") {
  check_op("reshape", {{"",
                        [](const Inputs& x) {
                          return reshape(x[0], {3, -1}) * x[1];
                        },
                        {{2, 3}, {3, 2}}}});
}

TEST_CASE("gradcheck: permute", "[autograd][gradcheck]") {
  check_op("permute", {{"",
                        [](const Inputs& x) {
                          return permute(x[0], {2, 0, 1});
                        },
                        {{2, 3, 4}}}});
}

TEST_CASE("gradcheck: transpose", "[autograd][gradcheck]") {
  check_op("transpose", {{"", [](const Inputs& x) { return transpose(x[0], 0, 2); }, {{2, 3, 4}}}});
}

TEST_CASE("gradcheck: squeeze", "[autograd][gradcheck]") {
  check_op("squeeze", {{"", [](const Inputs& x) { return squeeze(x[0], 1); }, {{3, 1, 2}}}});
}

TEST_CASE("gradcheck: unsqueeze", "[autograd][gradcheck]") {
  check_op("unsqueeze",
           {{"", [](const Inputs& x) { return unsqueeze(x[0], 0) * x[1]; }, {{3}, {2, 3}}}});
}

TEST_CASE("gradcheck: slice", "[autograd][gradcheck]") {
  check_op("slice",
           {{"with step", [](const Inputs& x) { return slice(x[0], 1, 1, 5, 2); }, {{2, 5}}},
            {"negative start", [](const Inputs& x) { return slice(x[0], 0, -2, 3); }, {{3, 2}}}});
}

TEST_CASE("gradcheck: concat", "[autograd][gradcheck]") {
  check_op("concat", {{"three parts",
                       [](const Inputs& x) {
                         return concat({x[0], x[1], x[2]}, 1);
                       },
                       {{2, 1}, {2, 3}, {2, 2}}},
                      {"stack (composed)",
                       [](const Inputs& x) {
                         return stack({x[0], x[1]}, 1);
                       },
                       {{2, 3}, {2, 3}}}});
}

TEST_CASE("gradcheck: unbind", "[autograd][gradcheck]") {
  check_op("unbind", {{"every part used, along the middle axis",
                       [](const Inputs& x) {
                         std::vector<Tensor> parts = unbind(x[0], 1);
                         return parts[0] * 2.0 + parts[1] * parts[2];
                       },
                       {{2, 3, 2}}}});
}

TEST_CASE("gradcheck: unbind_part", "[autograd][gradcheck]") {
  check_op("unbind_part", {{"only some parts used",
                            [](const Inputs& x) { return tanh(unbind(x[0], 0)[1]); },
                            {{3, 4}}}});
}

TEST_CASE("gradcheck: broadcast_to", "[autograd][gradcheck]") {
  check_op("broadcast_to", {{"",
                             [](const Inputs& x) {
                               return broadcast_to(x[0], {4, 2, 3});
                             },
                             {{2, 1}}}});
}

TEST_CASE("gradcheck: index_select", "[autograd][gradcheck]") {
  check_op("index_select", {{"embedding lookup with a repeated id",
                             [](const Inputs& x) {
                               return index_select(x[0], 0, index_tensor({3, 0, 3, 1}, {2, 2}));
                             },
                             {{4, 3}}},
                            {"middle axis",
                             [](const Inputs& x) {
                               return index_select(x[0], 1, index_tensor({2, 0}, {2}));
                             },
                             {{2, 3, 2}}}});
}

TEST_CASE("gradcheck: gather", "[autograd][gradcheck]") {
  check_op("gather", {{"target class per row",
                       [](const Inputs& x) {
                         return gather(x[0], 1, index_tensor({2, 0, 1}, {3, 1}));
                       },
                       {{3, 4}}}});
}

TEST_CASE("gradcheck: matmul", "[autograd][gradcheck]") {
  check_op(
      "matmul",
      {{"2-D", [](const Inputs& x) { return matmul(x[0], x[1]); }, {{3, 4}, {4, 2}}},
       {"batched 3-D", [](const Inputs& x) { return matmul(x[0], x[1]); }, {{2, 3, 4}, {2, 4, 5}}},
       {"batch broadcast against 2-D",
        [](const Inputs& x) { return matmul(x[0], x[1]); },
        {{2, 3, 4}, {4, 2}}},
       {"batch broadcast of size 1",
        [](const Inputs& x) { return matmul(x[0], x[1]); },
        {{1, 3, 4}, {2, 4, 2}}},
       {"4-D (attention heads)",
        [](const Inputs& x) { return matmul(x[0], transpose(x[1])); },
        {{2, 2, 3, 4}, {2, 2, 3, 4}}}});
}
