// interpret/rollout.h: head fusion, the residual, rollout and flow on a 3-token, 2-layer case
// worked by hand, the normalisation-axis pitfall, and the errors.
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::interpret;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// Two layers of two heads over three tokens; every row sums to 1 (softmax rows).
NDArray layer1() {
  return f64({1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5,  // head 0
              0.5, 0.5, 0, 0, 1, 0, 0, 0.5, 0.5},     // head 1
             {2, 3, 3});
}
NDArray layer2() {
  return f64({0, 1, 0, 0, 0, 1, 1, 0, 0,               // head 0: a permutation
              0.5, 0, 0.5, 0, 0.5, 0.5, 0.5, 0.5, 0},  // head 1
             {2, 3, 3});
}

// The sum of each row of a [T, T] array.
std::vector<double> row_sums(const NDArray& m) {
  std::vector<double> sums(static_cast<std::size_t>(m.size(0)), 0.0);
  for (Index i = 0; i < m.size(0); ++i)
    for (Index j = 0; j < m.size(1); ++j) sums[static_cast<std::size_t>(i)] += m.at({i, j});
  return sums;
}

}  // namespace

TEST_CASE("fuse_heads: mean, max and min over the heads, element by element", "[interpret]") {
  // Layer 1, element by element over (head 0, head 1):
  //   mean = [3/4 1/4 0; 1/4 3/4 0; 1/8 3/8 1/2]
  //   max  = [1 1/2 0; 1/2 1 0; 1/4 1/2 1/2]
  //   min  = [1/2 0 0; 0 1/2 0; 0 1/4 1/2]
  check_close(fuse_heads(layer1(), HeadFusion::kMean),
              f64({0.75, 0.25, 0, 0.25, 0.75, 0, 0.125, 0.375, 0.5}, {3, 3}));
  check_close(fuse_heads(layer1(), HeadFusion::kMax),
              f64({1, 0.5, 0, 0.5, 1, 0, 0.25, 0.5, 0.5}, {3, 3}));
  check_close(fuse_heads(layer1(), HeadFusion::kMin),
              f64({0.5, 0, 0, 0, 0.5, 0, 0, 0.25, 0.5}, {3, 3}));
}

TEST_CASE("attention rollout by hand, heads averaged: A_2 A_1 with A = 0.5 W + 0.5 I",
          "[interpret]") {
  // Mean-fused layer 1 (above) and layer 2 = [1/4 1/2 1/4; 0 1/4 3/4; 3/4 1/4 0]. Their rows
  // already sum to 1, so 0.5 W + 0.5 I needs no renormalising:
  //   A_1 = [7/8 1/8 0; 1/8 7/8 0; 1/16 3/16 3/4]
  //   A_2 = [5/8 1/4 1/8; 0 5/8 3/8; 3/8 1/8 1/2]
  // Rollout = A_2 A_1 (the later layer on the left). Row 0:
  //   (5/8 * 7/8 + 1/4 * 1/8 + 1/8 * 1/16, 5/8 * 1/8 + 1/4 * 7/8 + 1/8 * 3/16, 1/8 * 3/4)
  //   = (75/128, 41/128, 12/128); rows 1 and 2 the same way:
  //   row 1 = (13/128, 79/128, 36/128), row 2 = (3/8, 1/4, 3/8).
  check_close(attention_rollout({layer1()}, HeadFusion::kMean),
              f64({0.875, 0.125, 0, 0.125, 0.875, 0, 0.0625, 0.1875, 0.75}, {3, 3}));
  NDArray rollout = attention_rollout({layer1(), layer2()});
  check_close(rollout, f64({75.0 / 128, 41.0 / 128, 12.0 / 128, 13.0 / 128, 79.0 / 128, 36.0 / 128,
                            0.375, 0.25, 0.375},
                           {3, 3}));
  for (double s : row_sums(rollout)) CHECK_THAT(s, WithinAbs(1, 1e-12));
  // The order matters: A_1 A_2 (earliest layer on the left) has first row
  // 7/8 (5/8, 1/4, 1/8) + 1/8 (0, 5/8, 3/8) = (35/64, 19/64, 10/64): not the rollout.
  CHECK_THAT(rollout.at({0, 0}), !WithinAbs(35.0 / 64, 1e-3));
}

TEST_CASE("the normalisation-axis pitfall: rollout's rows sum to 1, not its columns",
          "[interpret]") {
  // Max fusion: the rows no longer sum to 1, so the division matters.
  //   max layer 1 = [1 1/2 0; 1/2 1 0; 1/4 1/2 1/2]  ->  0.5 W + 0.5 I has rows
  //   [1 1/4 0] (sum 5/4), [1/4 1 0] (sum 5/4), [1/8 1/4 3/4] (sum 9/8), so
  //   A_1 = [4/5 1/5 0; 1/5 4/5 0; 1/9 2/9 2/3].
  //   Dividing by the COLUMN sums (11/8, 3/2, 3/4) gives [8/11 1/6 0; ...] instead, and the
  //   vit-explain bug (element (i, j) over row j's sum) [4/5 1/5 0; 1/5 4/5 0; 1/10 1/5 2/3].
  NDArray a1 = residual_attention(fuse_heads(layer1(), HeadFusion::kMax));
  check_close(a1, f64({0.8, 0.2, 0, 0.2, 0.8, 0, 1.0 / 9, 2.0 / 9, 2.0 / 3}, {3, 3}));
  for (double s : row_sums(a1)) CHECK_THAT(s, WithinAbs(1, 1e-12));
  //   max layer 2 = [1/2 1 1/2; 0 1/2 1; 1 1/2 0] -> A_2 = [1/2 1/3 1/6; 0 3/5 2/5; 2/5 1/5 2/5]
  //   rollout = A_2 A_1 = [131/270 109/270 1/9; 37/225 128/225 4/15; 91/225 74/225 4/15]
  //   (with column sums instead its first row would be (17/33, 16/45, 1/5)).
  NDArray rollout = attention_rollout({layer1(), layer2()}, HeadFusion::kMax);
  check_close(rollout, f64({131.0 / 270, 109.0 / 270, 1.0 / 9, 37.0 / 225, 128.0 / 225, 4.0 / 15,
                            91.0 / 225, 74.0 / 225, 4.0 / 15},
                           {3, 3}));
  for (double s : row_sums(rollout)) CHECK_THAT(s, WithinAbs(1, 1e-12));
}

TEST_CASE("attention rollout with min fusion: the residual keeps an all-zero row alive",
          "[interpret]") {
  //   min layer 2 = [0 0 0; 0 0 1/2; 1/2 0 0]: row 0 is all zero, 0.5 W + 0.5 I = (1/2, 0, 0)
  //   and renormalised (1, 0, 0). A_1 = [1 0 0; 0 1 0; 0 1/7 6/7], A_2 = [1 0 0; 0 2/3 1/3;
  //   1/3 0 2/3], rollout = A_2 A_1 = [1 0 0; 0 5/7 2/7; 1/3 2/21 4/7].
  check_close(attention_rollout({layer1(), layer2()}, HeadFusion::kMin),
              f64({1, 0, 0, 0, 5.0 / 7, 2.0 / 7, 1.0 / 3, 2.0 / 21, 4.0 / 7}, {3, 3}));
}

TEST_CASE("attention flow by hand: paths carry their smallest edge, not the product",
          "[interpret]") {
  // Two layers: the only paths from top token i to input token j are i -> k -> j, one per
  // middle token k, sharing no edge, so max-flow(i, j) = sum_k min(A_2[i, k], A_1[k, j])
  // (rollout: sum_k A_2[i, k] A_1[k, j]). With the mean-fused A_1, A_2 of the rollout test:
  //   flow(0, 0) = min(5/8, 7/8) + min(1/4, 1/8) + min(1/8, 1/16) = 5/8 + 1/8 + 1/16 = 13/16
  //   flow(0, 1) = min(5/8, 1/8) + min(1/4, 7/8) + min(1/8, 3/16) = 1/8 + 1/4 + 1/8 = 1/2
  //   flow(0, 2) = 0 + 0 + min(1/8, 3/4) = 1/8
  //   row 1 = (3/16, 13/16, 3/8), row 2 = (9/16, 7/16, 1/2).
  NDArray raw = attention_flow({layer1(), layer2()}, HeadFusion::kMean, /*normalise=*/false);
  check_close(raw, f64({13.0 / 16, 0.5, 0.125, 3.0 / 16, 13.0 / 16, 0.375, 9.0 / 16, 7.0 / 16, 0.5},
                       {3, 3}));
  // Normalised like the authors' code, row 0 = (13, 8, 2) / 23: flow still differs from
  // rollout's (75, 41, 12) / 128.
  NDArray flow = attention_flow({layer1(), layer2()});
  check_close(flow, f64({13.0 / 23, 8.0 / 23, 2.0 / 23, 3.0 / 22, 13.0 / 22, 6.0 / 22, 9.0 / 24,
                         7.0 / 24, 8.0 / 24},
                        {3, 3}));
  CHECK_THAT(flow.at({0, 0}), !WithinAbs(attention_rollout({layer1(), layer2()}).at({0, 0}), 1e-3));
  check_close(attention_flow_from({layer1(), layer2()}, 1),
              f64({3.0 / 22, 13.0 / 22, 6.0 / 22}, {3}));
  // One layer: the single edge i -> j is the whole flow, equal to A_1 = rollout.
  check_close(attention_flow({layer1()}, HeadFusion::kMean, false), attention_rollout({layer1()}));
}

TEST_CASE("attention flow: paths through a shared edge share its capacity", "[interpret]") {
  // Two tokens, three layers of one head. W = [0 1; 0 1] gives A = 0.5 W + 0.5 I =
  // [1/2 1/2; 0 1] (layers 1 and 3), W = [1 0; 1 0] gives A_2 = [1 0; 1/2 1/2].
  // The edges (top to bottom): 3:0 -> 2:0 and 3:0 -> 2:1 (1/2 each), 3:1 -> 2:1 (1);
  // 2:0 -> 1:0 (1), 2:1 -> 1:0 and 2:1 -> 1:1 (1/2 each); 1:0 -> 0:0 and 1:0 -> 0:1 (1/2 each),
  // 1:1 -> 0:1 (1).
  // Top token 0 to input 0: two paths, 3:0 -> 2:0 -> 1:0 -> 0:0 and 3:0 -> 2:1 -> 1:0 -> 0:0,
  // each with smallest edge 1/2, but both end on the edge 1:0 -> 0:0 of capacity 1/2: flow
  // 1/2, not 1. Top token 0 to input 1: 3:0 -> 2:0 -> 1:0 -> 0:1 (1/2) and
  // 3:0 -> 2:1 -> 1:1 -> 0:1 (1/2) share no edge: flow 1. Top token 1: to input 0 only
  // through 1:0 -> 0:0, 1/2; to input 1 through 2:1 -> 1:0 -> 0:1 and 2:1 -> 1:1 -> 0:1, 1.
  NDArray upper = f64({0, 1, 0, 1}, {1, 2, 2});
  NDArray lower = f64({1, 0, 1, 0}, {1, 2, 2});
  check_close(attention_flow({upper, lower, upper}, HeadFusion::kMean, false),
              f64({0.5, 1, 0.5, 1}, {2, 2}));
  // Rollout multiplies: A_2 A_1 = [1/2 1/2; 1/4 3/4], A_3 A_2 A_1 = [3/8 5/8; 1/4 3/4].
  check_close(attention_rollout({upper, lower, upper}),
              f64({3.0 / 8, 5.0 / 8, 0.25, 0.75}, {2, 2}));
}

TEST_CASE("rollout and flow: errors name the function and the shapes", "[interpret]") {
  CHECK_THAT(error_message([] { attention_rollout({}); }), Contains("at least one layer"));
  CHECK_THAT(error_message([] {
               attention_rollout({NDArray::zeros({4, 4})});
             }),
             Contains("attention_rollout: a layer's attention must be [H, T, T]"));
  CHECK_THAT(error_message([] {
               attention_rollout({NDArray::zeros({4, 4})});
             }),
             Contains("got [4,4]"));
  CHECK_THAT(error_message([] {
               attention_rollout({NDArray::zeros({2, 3, 4})});
             }),
             Contains("got [2,3,4]"));
  CHECK_THAT(error_message([] {
               fuse_heads(NDArray::zeros({0, 3, 3}), HeadFusion::kMean);
             }),
             Contains("fuse_heads: a layer's attention must be [H, T, T]"));
  CHECK_THAT(error_message([] {
               attention_flow({NDArray::zeros({2, 3, 3}), NDArray::zeros({2, 4, 4})});
             }),
             Contains("attention_flow: layer 2 has shape [2,4,4] but layer 1 has [2,3,3]"));
  CHECK_THAT(error_message([] {
               attention_flow_from({NDArray::zeros({1, 3, 3})}, 3);
             }),
             Contains("token 3 is outside 0..2"));
  CHECK_THAT(error_message([] {
               residual_attention(NDArray::zeros({2, 3}));
             }),
             Contains("residual_attention: expects fused attention [T, T], got [2,3]"));
  // 2 layers of 100 tokens: 20000 edges are accepted by the limit, 3 layers are not.
  CHECK_THAT(error_message([] {
               attention_flow({f64({1, -1, 0, 1}, {1, 2, 2})});
             }),
             Contains("attention_flow: attention weights must be >= 0, got -1 at (0, 1)"));
  std::vector<NDArray> deep(3, NDArray::zeros({1, 100, 100}));
  CHECK_THAT(error_message([&] { attention_flow(deep); }),
             Contains("3 layers of 100 tokens make 30000 edges, more than kMaxFlowEdges"));
}
