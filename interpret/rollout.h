// Attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in
// Transformers"): which INPUT tokens a token at the top of a Transformer drew on.
//
// Raw attention of layer l only says how token i mixes the tokens of layer l's input, and above
// layer 1 those are already mixtures. Both methods follow the mixing down through the layers.
//
// The residual. A block computes V_{l+1} = V_l + W_att V_l = (W_att + I) V_l: each token's own
// input passes around the attention. The paper models it by adding the identity:
//     A = 0.5 W_att + 0.5 I                                          (section 3, unnumbered)
// then renormalising each row to sum to 1. Softmax rows already sum to 1, so A's do too; after
// fusing the heads with max or min they do not, and the division matters. The authors' code
// writes aug = att + I; aug /= aug.sum(-1, keepdims=True): the same matrix (the 0.5 cancels).
// ROWS, not columns: row i is query i's distribution over the keys j. Dividing by the column
// sums, or by a row sum broadcast along the wrong axis (vit-explain's missing keepdim: element
// (i, j) divided by row j's sum), gives other numbers; tests/interpret/test_rollout.cpp
// catches both.
//
// Rollout (eq. 1): Ã(l_i) = A(l_i) Ã(l_{i-1}), Ã(l_1) = A(l_1), so over L layers
//     rollout = A_L ... A_2 A_1                                      [T, T]
// (the latest layer on the LEFT). Row i says how the top layer's token i draws on the input
// tokens, and sums to 1; a ViT's explanation is the class token's row without its own column.
// Cost: L - 1 products of T x T matrices, O(L T^3).
//
// Flow: the layers as a graph, one node per token per layer ((L + 1) T nodes: the inputs and
// the L layers' outputs) and an edge from token i of layer l to token j of layer l - 1 with
// capacity A_l[i, j] (L T^2 edges). The flow from top token i to input token j is the maximum
// flow between those two nodes: a path carries at most its smallest edge (rollout multiplies
// along it), and paths that share an edge share its capacity. Like the authors' code, each
// top token's flows are then divided by their sum (normalise = true) so that rows compare
// with rollout's. Algorithm: Dinic's (levels by breadth-first search, then blocking flows
// along level-increasing paths), O(V^2 E) per (top token, input token) pair in the worst case,
// V = (L + 1) T nodes, E = L T^2 edges; one row is T max-flows, the whole map T^2. (The
// authors used networkx's Edmonds-Karp: the same maximum, found one shortest path at a time.)
// Graphs with more than kMaxFlowEdges edges are refused: the cost, O(d^2 n^4) in the paper's
// words, is why flow is for small token counts.
//
// Input: the attention weights of each layer in forward order (layer 1 first), each [H, T, T]
// (heads, queries, keys) for ONE example: nn::MultiheadAttention's per-head weights
// (average_attn_weights = false) are [B, H, T, T]; take example b with
// squeeze(slice(w, 0, b, b + 1), 0). float32 or float64; results are float64.
#pragma once

#include <vector>

#include "tensor/ndarray.h"

namespace attend::interpret {

// How the H heads of a layer become one T x T matrix (the paper averages; App. A.1 looks at
// heads one by one). kMax keeps the strongest head's weight for every (query, key).
enum class HeadFusion { kMean, kMax, kMin };

// [H, T, T] -> [T, T]: the heads' mean, maximum or minimum, element by element.
NDArray fuse_heads(const NDArray& attention, HeadFusion fusion);

// [T, T] -> [T, T]: 0.5 A + 0.5 I with each row divided by its sum (the residual, above).
// The entries must be non-negative (attention weights).
NDArray residual_attention(const NDArray& fused);

// Rollout A_L ... A_1 of the residual-augmented, fused layers: [T, T], rows sum to 1.
NDArray attention_rollout(const std::vector<NDArray>& layers,
                          HeadFusion fusion = HeadFusion::kMean);

// The largest graph attention_flow accepts: L T^2 edges (a 4-layer ViT with 64 patches and a
// class token has 4 * 65^2 = 16900).
inline constexpr Index kMaxFlowEdges = 20000;

// Max-flow from top token `token` to each input token: [T] (divided by its sum if normalise).
NDArray attention_flow_from(const std::vector<NDArray>& layers, Index token,
                            HeadFusion fusion = HeadFusion::kMean, bool normalise = true);

// attention_flow_from for every top token: [T, T], row i = token i's flows.
NDArray attention_flow(const std::vector<NDArray>& layers, HeadFusion fusion = HeadFusion::kMean,
                       bool normalise = true);

}  // namespace attend::interpret
