// backward(): reverse-mode differentiation over the recorded graph.
//
// 1. Sort the nodes behind the output topologically (every node after all of its inputs),
//    with an explicit stack rather than recursion, so a 100,000-node chain is fine.
// 2. Seed the output with dL/d(output) and visit the nodes in reverse order. When a node is
//    reached, every op that used it has already sent it its share of the gradient, so its
//    gradient is complete: run its hooks, store it if it is a leaf (or retained), and call
//    its backward function to pass gradients on to its inputs, where they are summed.
// 3. Unless asked to retain the graph, drop each backward function once used. The saved
//    arrays it captured are freed, and a second backward() through it is an error.
#include <atomic>
#include <cmath>
#include <unordered_set>

#include "autograd/saved_array.h"
#include "autograd/tensor.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"

namespace attend {
namespace {

// Each pass marks the nodes it reaches with a number no earlier pass used, so no node ever
// needs unmarking. The numbers come from one atomic counter for the whole program, because
// two threads may each run backward() on their own graph at the same time. With a plain
// `static` counter their increments race (undefined behaviour): a lost increment can hand a
// pass the very number that the previous pass left on its nodes, which then look visited
// and get no gradient. Counters per thread (thread_local) would be wrong too: a node kept
// from one step to the next (a parameter) may be reached by a pass in one thread and later
// by a pass in another thread whose own counter has reached the same number. Relaxed order
// suffices: only the uniqueness of the numbers matters, and the nodes themselves are handed
// from thread to thread by whatever synchronisation passed the graph along.
std::uint64_t next_visit_mark() {
  static std::atomic<std::uint64_t> mark{0};
  return mark.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Post-order DFS: inputs come before the nodes that use them. The order is written into
// `order`, whose memory (like the stack's) is reused from one backward() to the next.
void topological_order(Node* root, std::vector<Node*>& order) {
  const std::uint64_t mark = next_visit_mark();
  thread_local std::vector<std::pair<Node*, std::size_t>> stack;  // node, next input to visit
  order.clear();
  stack.clear();
  root->visit_mark = mark;
  stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      Node* input = node->inputs[next++].get();
      if (input->requires_grad && input->visit_mark != mark) {
        input->visit_mark = mark;
        stack.emplace_back(input, 0);
      }
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
}

void check_finite(const NDArray& g, const Node& node, std::size_t input) {
  bool finite = dispatch_float(g.dtype(), "backward", [&]<class T>() {
    for (T v : g.span<T>())
      if (!std::isfinite(v)) return false;
    return true;
  });
  if (!finite)
    fail(
        "backward: the backward of '{}' produced a non-finite (NaN or infinite) gradient for its "
        "input {} (shape {}); look at the forward of that op for a log(0), a division by 0 or "
        "an overflow",
        node.op, input, g.shape());
}

NDArray accumulate(const NDArray& sum, const NDArray& g) {
  return sum.defined() ? add(sum, g) : g;
}

// Adds one contribution g to an input's pending gradient. A sum this pass allocated itself (of
// two or more contributions) is in owned_sums: no one else holds it, so later contributions are
// added in place, without a new array per addition; sum + g either way, element by element,
// the same bits. A single contribution is kept as it came (it may be shared with another input
// or a saved array).
void add_to_pending(Node& input, const NDArray& g, std::unordered_set<const Node*>& owned_sums) {
  if (!input.pending_grad.defined()) {
    input.pending_grad = g;
  } else if (owned_sums.contains(&input)) {
    add_(input.pending_grad, g);
  } else {
    input.pending_grad = add(input.pending_grad, g);
    owned_sums.insert(&input);
  }
}

}  // namespace

void Tensor::backward(const BackwardOptions& options) const {
  check_defined("backward");
  if (numel() != 1)
    fail(
        "backward: the tensor has shape {}; backward() without an argument needs a single-element "
        "(scalar) tensor such as a loss. For other shapes pass dL/d(tensor) explicitly: "
        "backward(grad_output)",
        shape());
  backward(NDArray::ones(shape(), dtype()), options);
}

void Tensor::backward(const NDArray& grad_output, const BackwardOptions& options) const {
  check_defined("backward");
  if (!node_->requires_grad)
    fail(
        "backward: this tensor does not require grad: none of the tensors it was computed "
        "from has requires_grad set (or it was computed under NoGradGuard)");
  attend::check_defined(grad_output, "backward", "grad_output");
  if (grad_output.shape() != shape() || grad_output.dtype() != dtype())
    fail("backward: grad_output {} {} must match the tensor {} {}", grad_output.shape(),
         dtype_name(grad_output.dtype()), shape(), dtype_name(dtype()));

  // Reused between calls (a hook or backward function may itself call backward(), so the
  // buffer is taken out and put back rather than shared).
  thread_local std::vector<Node*> spare;
  std::vector<Node*> order = std::move(spare);
  topological_order(node_.get(), order);
  struct GiveBack {
    std::vector<Node*>& order;
    ~GiveBack() { spare = std::move(order); }
  } give_back{order};
  for (Node* node : order)
    if (node->graph_freed)
      fail(
          "backward: the graph through '{}' was already used by backward() and freed. To run "
          "backward twice through the same graph, pass BackwardOptions{{.retain_graph = true}} "
          "the first time",
          node->op);

  const bool detect_anomaly = anomaly_detection_enabled();
  std::unordered_set<const Node*> owned_sums;  // see add_to_pending
  node_->pending_grad = grad_output;
  try {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* node = *it;
      NDArray g = std::move(node->pending_grad);
      node->pending_grad = NDArray();
      if (!g.defined()) continue;  // no path from the output reaches this node
      for (const GradHook& hook : node->hooks) {
        NDArray replaced = hook(g);
        if (replaced.defined()) g = std::move(replaced);
      }
      if (detect_anomaly) node->grad_norm = std::sqrt(squared_norm(g));
      if (node->op.empty() || node->retains_grad) node->grad = accumulate(node->grad, g);
      if (node->op.empty()) continue;

      std::vector<NDArray> input_grads;
      try {
        input_grads = node->backward(g);
      } catch (const SavedArrayModified& e) {
        fail("backward of {}: {}", node->op, e.what());
      }
      if (input_grads.size() != node->inputs.size())
        fail("backward of '{}' returned {} gradients for {} inputs", node->op, input_grads.size(),
             node->inputs.size());
      for (std::size_t i = 0; i < input_grads.size(); ++i) {
        Node* input = node->inputs[i].get();
        const NDArray& gi = input_grads[i];
        if (!input->requires_grad || !gi.defined()) continue;
        if (gi.shape() != input->data.shape() || gi.dtype() != input->data.dtype())
          fail("backward of '{}' returned a gradient of {} {} for input {} of {} {}", node->op,
               gi.shape(), dtype_name(gi.dtype()), i, input->data.shape(),
               dtype_name(input->data.dtype()));
        if (detect_anomaly) check_finite(gi, *node, i);
        add_to_pending(*input, gi, owned_sums);
      }
      if (!options.retain_graph) {
        node->backward = nullptr;  // frees the arrays the backward function saved
        node->graph_freed = true;
      }
    }
  } catch (...) {
    for (Node* node : order) node->pending_grad = NDArray();
    throw;
  }
}

}  // namespace attend
