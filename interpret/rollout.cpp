// Attention rollout and attention flow: see rollout.h for the equations.
#include "interpret/rollout.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <string_view>

#include "tensor/error.h"

namespace attend::interpret {
namespace {

using Matrix = std::vector<double>;  // T x T, row-major

// Every layer is [H, T, T] with the same shape as the first; returns T.
Index check_layers(const std::vector<NDArray>& layers, std::string_view op) {
  if (layers.empty()) fail("{}: needs the attention of at least one layer", op);
  const NDArray& first = layers.front();
  if (first.ndim() != 3 || first.size(1) != first.size(2) || first.numel() == 0)
    fail("{}: a layer's attention must be [H, T, T] (heads, queries, keys; H, T >= 1), got {}", op,
         first.shape());
  for (std::size_t l = 1; l < layers.size(); ++l)
    if (layers[l].shape() != first.shape())
      fail("{}: layer {} has shape {} but layer 1 has {}", op, l + 1, layers[l].shape(),
           first.shape());
  return first.size(1);
}

Matrix fuse(const NDArray& attention, HeadFusion fusion) {
  const Index heads = attention.size(0), cells = attention.size(1) * attention.size(2);
  const std::vector<double> a = attention.to_vector();
  Matrix fused(a.begin(), a.begin() + cells);  // head 0
  for (Index h = 1; h < heads; ++h)
    for (Index c = 0; c < cells; ++c) {
      const double x = a[static_cast<std::size_t>(h * cells + c)];
      double& f = fused[static_cast<std::size_t>(c)];
      f = fusion == HeadFusion::kMean  ? f + x
          : fusion == HeadFusion::kMax ? std::max(f, x)
                                       : std::min(f, x);
    }
  if (fusion == HeadFusion::kMean)
    for (double& f : fused) f /= static_cast<double>(heads);
  return fused;
}

// 0.5 A + 0.5 I, then each ROW divided by its sum (never 0: the diagonal is at least 0.5).
Matrix add_residual(Matrix a, Index tokens, std::string_view op) {
  for (Index i = 0; i < tokens; ++i) {
    double* row = a.data() + i * tokens;
    double row_sum = 0;
    for (Index j = 0; j < tokens; ++j) {
      if (row[j] < 0)
        fail("{}: attention weights must be >= 0, got {} at ({}, {})", op, row[j], i, j);
      row[j] = 0.5 * row[j] + (i == j ? 0.5 : 0.0);
      row_sum += row[j];
    }
    for (Index j = 0; j < tokens; ++j) row[j] /= row_sum;
  }
  return a;
}

// The residual-augmented, fused matrix of every layer, in forward order.
std::vector<Matrix> augmented_layers(const std::vector<NDArray>& layers, HeadFusion fusion,
                                     std::string_view op) {
  const Index tokens = check_layers(layers, op);
  std::vector<Matrix> out;
  for (const NDArray& layer : layers) out.push_back(add_residual(fuse(layer, fusion), tokens, op));
  return out;
}

Matrix multiply(const Matrix& a, const Matrix& b, Index n) {
  Matrix c(static_cast<std::size_t>(n * n), 0.0);
  for (Index i = 0; i < n; ++i)
    for (Index k = 0; k < n; ++k)
      for (Index j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

NDArray to_array(const Matrix& m, const Shape& shape) {
  return NDArray::from_vector(std::span<const double>(m), shape);
}

// The layer graph of rollout.h with its residual capacities, for Dinic's algorithm. Node
// l * T + t is token t of layer l (layer 0: the input tokens). Edges e and e ^ 1 are each
// other's reverse: pushing flow along one gives the other residual capacity to take it back.
struct FlowGraph {
  struct Edge {
    std::size_t to;
    double capacity, flow = 0;
  };
  std::vector<Edge> edges;
  std::vector<std::vector<std::size_t>> out;  // node -> its edges (forward and reverse)
  std::vector<Index> level;                   // breadth-first distance from the source
  std::vector<std::size_t> next_edge;         // the first edge of each node not yet exhausted

  explicit FlowGraph(Index nodes)
      : out(static_cast<std::size_t>(nodes)), level(out.size()), next_edge(out.size()) {}
  void add(Index from, Index to, double capacity) {
    out[static_cast<std::size_t>(from)].push_back(edges.size());
    edges.push_back({static_cast<std::size_t>(to), capacity});
    out[static_cast<std::size_t>(to)].push_back(edges.size());
    edges.push_back({static_cast<std::size_t>(from), 0.0});
  }
  double max_flow(std::size_t source, std::size_t sink);

 private:
  double residual(std::size_t e) const { return edges[e].capacity - edges[e].flow; }
  bool find_levels(std::size_t source, std::size_t sink);
  double push(std::size_t node, std::size_t sink, double limit);
};

// Residual capacities below this count as used up: floating-point leftovers of an augmentation
// must not open paths that carry nothing (capacities are at most 1).
constexpr double kFlowEpsilon = 1e-14;

// Breadth-first search over the edges with capacity left; true if the sink is reachable.
bool FlowGraph::find_levels(std::size_t source, std::size_t sink) {
  std::fill(level.begin(), level.end(), -1);
  level[source] = 0;
  std::deque<std::size_t> queue{source};
  while (!queue.empty()) {
    const std::size_t node = queue.front();
    queue.pop_front();
    for (std::size_t e : out[node])
      if (level[edges[e].to] < 0 && residual(e) > kFlowEpsilon) {
        level[edges[e].to] = level[node] + 1;
        queue.push_back(edges[e].to);
      }
  }
  return level[sink] >= 0;
}

// One path from `node` to the sink that goes one level down at each edge, carrying at most
// `limit`; returns what it carried (0: none left from this node in this phase).
double FlowGraph::push(std::size_t node, std::size_t sink, double limit) {
  if (node == sink) return limit;
  for (; next_edge[node] < out[node].size(); ++next_edge[node]) {
    const std::size_t e = out[node][next_edge[node]];
    if (level[edges[e].to] != level[node] + 1 || residual(e) <= kFlowEpsilon) continue;
    const double carried = push(edges[e].to, sink, std::min(limit, residual(e)));
    if (carried > 0) {
      edges[e].flow += carried;
      edges[e ^ 1].flow -= carried;
      return carried;
    }
  }
  return 0;  // every edge from here is full or leads nowhere: skipped for the rest of the phase
}

// Dinic: levels by breadth-first search, then paths along increasing levels until none is
// left (a blocking flow), repeated until the sink is out of reach.
double FlowGraph::max_flow(std::size_t source, std::size_t sink) {
  for (Edge& e : edges) e.flow = 0;
  double total = 0;
  while (find_levels(source, sink)) {
    std::fill(next_edge.begin(), next_edge.end(), 0);
    while (const double carried = push(source, sink, std::numeric_limits<double>::infinity()))
      total += carried;
  }
  return total;
}

FlowGraph layer_graph(const std::vector<Matrix>& augmented, Index tokens) {
  const Index depth = static_cast<Index>(augmented.size());
  if (depth * tokens * tokens > kMaxFlowEdges)
    fail(
        "attention_flow: {} layers of {} tokens make {} edges, more than kMaxFlowEdges = {}; "
        "use attention_rollout",
        depth, tokens, depth * tokens * tokens, kMaxFlowEdges);
  FlowGraph graph((depth + 1) * tokens);
  for (Index l = 1; l <= depth; ++l)
    for (Index i = 0; i < tokens; ++i)
      for (Index j = 0; j < tokens; ++j) {
        const double capacity = augmented[static_cast<std::size_t>(l - 1)][i * tokens + j];
        if (capacity > 0) graph.add(l * tokens + i, (l - 1) * tokens + j, capacity);
      }
  return graph;
}

// Row `token` of the flow map into `row` (T values).
void flow_row(FlowGraph& graph, Index depth, Index tokens, Index token, bool normalise,
              double* row) {
  double row_sum = 0;
  for (Index j = 0; j < tokens; ++j)
    row_sum += row[j] = graph.max_flow(static_cast<std::size_t>(depth * tokens + token),
                                       static_cast<std::size_t>(j));
  if (normalise && row_sum > 0)
    for (Index j = 0; j < tokens; ++j) row[j] /= row_sum;
}

}  // namespace

NDArray fuse_heads(const NDArray& attention, HeadFusion fusion) {
  check_layers({attention}, "fuse_heads");
  const Index tokens = attention.size(1);
  return to_array(fuse(attention, fusion), {tokens, tokens});
}

NDArray residual_attention(const NDArray& fused) {
  if (fused.ndim() != 2 || fused.size(0) != fused.size(1))
    fail("residual_attention: expects fused attention [T, T], got {}", fused.shape());
  const Index tokens = fused.size(0);
  return to_array(add_residual(fused.to_vector(), tokens, "residual_attention"), fused.shape());
}

NDArray attention_rollout(const std::vector<NDArray>& layers, HeadFusion fusion) {
  const std::vector<Matrix> a = augmented_layers(layers, fusion, "attention_rollout");
  const Index tokens = layers.front().size(1);
  Matrix rollout = a.front();  // eq. (1): Ã(l_1) = A(l_1)
  for (std::size_t l = 1; l < a.size(); ++l)
    rollout = multiply(a[l], rollout, tokens);  // Ã(l_i) = A(l_i) Ã(l_{i-1})
  return to_array(rollout, {tokens, tokens});
}

NDArray attention_flow_from(const std::vector<NDArray>& layers, Index token, HeadFusion fusion,
                            bool normalise) {
  const std::vector<Matrix> a = augmented_layers(layers, fusion, "attention_flow");
  const Index tokens = layers.front().size(1), depth = static_cast<Index>(a.size());
  if (token < 0 || token >= tokens)
    fail("attention_flow_from: token {} is outside 0..{}", token, tokens - 1);
  FlowGraph graph = layer_graph(a, tokens);
  NDArray flows = NDArray::zeros({tokens}, kFloat64);
  flow_row(graph, depth, tokens, token, normalise, flows.data<double>());
  return flows;
}

NDArray attention_flow(const std::vector<NDArray>& layers, HeadFusion fusion, bool normalise) {
  const std::vector<Matrix> a = augmented_layers(layers, fusion, "attention_flow");
  const Index tokens = layers.front().size(1), depth = static_cast<Index>(a.size());
  FlowGraph graph = layer_graph(a, tokens);
  NDArray flows = NDArray::zeros({tokens, tokens}, kFloat64);
  for (Index i = 0; i < tokens; ++i)
    flow_row(graph, depth, tokens, i, normalise, flows.data<double>() + i * tokens);
  return flows;
}

}  // namespace attend::interpret
