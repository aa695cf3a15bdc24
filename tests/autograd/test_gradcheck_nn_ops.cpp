// gradcheck of the ops of nn/ that have a backward of their own (not composed of
// autograd ops): linear, embedding, layer_norm, cross_entropy, conv2d and the poolings.
// One test case "gradcheck: <op>" per op, as docs/ops.md names them; see op_cases.h.
#include "nn/conv.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/pool.h"
#include "op_cases.h"

using namespace attend;
using namespace attend::testing;

TEST_CASE("gradcheck: linear", "[autograd][gradcheck]") {
  check_op("linear", {{"with bias, 3-D input",
                       [](const Inputs& x) { return nn::linear(x[0], x[1], x[2]); },
                       {{2, 3, 4}, {5, 4}, {5}}},
                      {"without bias",
                       [](const Inputs& x) { return nn::linear(x[0], x[1], Tensor()); },
                       {{3, 4}, {2, 4}}}});
}

TEST_CASE("gradcheck: embedding", "[autograd][gradcheck]") {
  check_op("embedding",
           {// (No padding id here: the padding row's gradient is zeroed on purpose, which a
            // finite difference would not see; tests/nn checks that row separately.)
            {"repeated ids",
             [](const Inputs& x) {
               return nn::embedding(index_tensor({1, 3, 1, 0}, {2, 2}), x[0]);
             },
             {{4, 3}}}});
}

TEST_CASE("gradcheck: layer_norm", "[autograd][gradcheck]") {
  check_op("layer_norm", {{"3-D input",
                           [](const Inputs& x) { return nn::layer_norm(x[0], x[1], x[2]); },
                           {{2, 3, 5}, {5}, {5}}}});
}

TEST_CASE("gradcheck: cross_entropy", "[autograd][gradcheck]") {
  check_op("cross_entropy", {{"mean with an ignored position",
                              [](const Inputs& x) {
                                return nn::cross_entropy(x[0], index_tensor({2, -100, 0, 1}, {4}));
                              },
                              {{4, 3}}},
                             {"label smoothing, 3-D logits",
                              [](const Inputs& x) {
                                return nn::cross_entropy(x[0],
                                                         index_tensor({2, 0, 1, 1, 0, 2}, {2, 3}),
                                                         {.label_smoothing = 0.1});
                              },
                              {{2, 3, 3}}},
                             {"sum",
                              [](const Inputs& x) {
                                return nn::cross_entropy(x[0], index_tensor({1, 0}, {2}),
                                                         {.reduction = nn::Reduction::kSum});
                              },
                              {{2, 4}}},
                             {"none (one loss per position)",
                              [](const Inputs& x) {
                                return nn::cross_entropy(x[0], index_tensor({1, 0, 2}, {3}),
                                                         {.reduction = nn::Reduction::kNone});
                              },
                              {{3, 4}}}});
}

TEST_CASE("gradcheck: conv2d", "[autograd][gradcheck]") {
  check_op("conv2d", {{"stride 2, padding 1, with bias",
                       [](const Inputs& x) { return nn::conv2d(x[0], x[1], x[2], 2, 1); },
                       {{2, 2, 5, 4}, {3, 2, 3, 3}, {3}}},
                      {"1x1 kernel, no bias",
                       [](const Inputs& x) { return nn::conv2d(x[0], x[1], Tensor()); },
                       {{1, 3, 2, 3}, {2, 3, 1, 1}}}});
}

TEST_CASE("gradcheck: max_pool2d", "[autograd][gradcheck]") {
  check_op("max_pool2d",
           {// Normal inputs have no ties (nor two values within eps of each other, almost surely).
            {"overlapping windows",
             [](const Inputs& x) { return nn::max_pool2d(x[0], 2, 1); },
             {{1, 2, 3, 4}}}});
}

TEST_CASE("gradcheck: avg_pool2d", "[autograd][gradcheck]") {
  check_op("avg_pool2d", {{"windows side by side",
                           [](const Inputs& x) { return nn::avg_pool2d(x[0], 2); },
                           {{2, 1, 4, 5}}}});
}
