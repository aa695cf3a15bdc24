// gradcheck of every reduction and softmax of autograd/ops_reduce.cpp, over each axis.
// One test case "gradcheck: <op>" per op, as docs/ops.md names them; see op_cases.h.
#include "op_cases.h"

using namespace attend;
using namespace attend::testing;

TEST_CASE("gradcheck: sum", "[autograd][gradcheck]") {
  check_op("sum", {
                      {"all elements", [](const Inputs& x) { return sum(x[0]); }, {{2, 3}}},
                  });
}

TEST_CASE("gradcheck: mean", "[autograd][gradcheck]") {
  check_op("mean", {
                       {"all elements", [](const Inputs& x) { return mean(x[0]); }, {{2, 3}}},
                   });
}

TEST_CASE("gradcheck: sum_axis", "[autograd][gradcheck]") {
  check_op("sum_axis",
           {
               {"axis 0", [](const Inputs& x) { return sum(x[0], 0); }, {{2, 3, 4}}},
               {"axis 1 keepdim", [](const Inputs& x) { return sum(x[0], 1, true); }, {{2, 3, 4}}},
               {"axis -1", [](const Inputs& x) { return sum(x[0], -1); }, {{2, 3, 4}}},
           });
}

TEST_CASE("gradcheck: mean_axis", "[autograd][gradcheck]") {
  check_op("mean_axis",
           {
               {"axis 0", [](const Inputs& x) { return mean(x[0], 0); }, {{2, 3, 4}}},
               {"axis 2 keepdim", [](const Inputs& x) { return mean(x[0], 2, true); }, {{2, 3, 4}}},
           });
}

TEST_CASE("gradcheck: max", "[autograd][gradcheck]") {
  check_op("max",
           {
               {"axis 0", [](const Inputs& x) { return max(x[0], 0); }, {{3, 4}}},
               {"axis 1 keepdim", [](const Inputs& x) { return max(x[0], 1, true); }, {{3, 4}}},
           });
}

TEST_CASE("gradcheck: logsumexp", "[autograd][gradcheck]") {
  check_op(
      "logsumexp",
      {
          {"axis 0", [](const Inputs& x) { return logsumexp(x[0], 0); }, {{3, 4}}},
          {"axis 1 keepdim", [](const Inputs& x) { return logsumexp(x[0], 1, true); }, {{3, 4}}},
      });
}

TEST_CASE("gradcheck: softmax", "[autograd][gradcheck]") {
  check_op("softmax",
           {
               {"last axis", [](const Inputs& x) { return softmax(x[0], -1); }, {{3, 4}}},
               {"axis 0 of 3-D", [](const Inputs& x) { return softmax(x[0], 0); }, {{3, 2, 2}}},
           });
}

TEST_CASE("gradcheck: log_softmax", "[autograd][gradcheck]") {
  check_op("log_softmax",
           {
               {"last axis", [](const Inputs& x) { return log_softmax(x[0], -1); }, {{3, 4}}},
               {"middle axis", [](const Inputs& x) { return log_softmax(x[0], 1); }, {{2, 3, 2}}},
           });
}
