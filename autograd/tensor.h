// Tensor: an NDArray that remembers how it was computed, so that backward() can send
// gradients back through the computation (reverse-mode automatic differentiation).
//
// Every operation on tensors (autograd/ops.h) computes its value with the NDArray kernels
// of tensor/ and, when one of its inputs requires a gradient, adds a Node to the graph:
// the op's name, its inputs, and a backward function that turns dL/d(output) into
// dL/d(input) for each input. backward() visits the graph from the loss towards the
// leaves in reverse topological order and applies the chain rule node by node, exactly
// like micrograd, but with whole arrays at each node instead of single numbers.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tensor/ndarray.h"

namespace attend {

// The gradient formula of one operation: given g = dL/d(output), it returns dL/d(input)
// for each input, in order (an undefined NDArray for an input that gets none).
using Grads = std::vector<NDArray>;
using BackwardFn = std::function<Grads(const NDArray& grad_output)>;

// A hook sees the gradient of a tensor during backward(); it may return a replacement
// (or an undefined NDArray to keep the gradient as it is).
using GradHook = std::function<NDArray(const NDArray& grad)>;

// One vertex of the graph. A Tensor is a shared handle to a Node.
struct Node {
  NDArray data;  // the value
  NDArray grad;  // dL/d(value): set by backward() on leaves and on retain_grad() tensors
  bool requires_grad = false;
  bool retains_grad = false;
  // How this value was computed; op is "" for a leaf (a tensor made directly from data).
  std::string op;
  std::vector<std::shared_ptr<Node>> inputs;
  BackwardFn backward;
  bool graph_freed = false;  // backward already ran and released the saved arrays
  std::vector<GradHook> hooks;
  std::string name;  // optional label for printing and graph drawings
  // Bookkeeping of backward(): the gradient collected so far in the current pass, a mark
  // for the topological sort, and (under DetectAnomalyGuard) the gradient's L2 norm.
  NDArray pending_grad;
  std::uint64_t visit_mark = 0;
  double grad_norm = -1;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();
};

struct BackwardOptions {
  // Keep the saved arrays so that backward() can run through this graph again.
  bool retain_graph = false;
};

class Tensor {
 public:
  Tensor() = default;  // undefined
  explicit Tensor(NDArray data, bool requires_grad = false);

  bool defined() const { return node_ != nullptr; }
  // The value. Through a Tensor handle it can be changed in place (optimizers do this).
  NDArray& data() const;
  const Shape& shape() const { return data().shape(); }
  int ndim() const { return data().ndim(); }
  Index size(int axis) const { return data().size(axis); }
  Index numel() const { return data().numel(); }
  DType dtype() const { return data().dtype(); }
  double item() const { return data().item(); }

  // ---- gradients -----------------------------------------------------------------------
  bool requires_grad() const;
  // Marks a leaf as a parameter whose gradient backward() computes. Returns *this.
  Tensor& requires_grad_(bool enabled = true);
  bool is_leaf() const;  // made from data, not computed by an op
  // dL/d(this) after backward() (leaves and retain_grad() tensors); undefined otherwise.
  Tensor grad() const;
  void zero_grad();  // forgets the gradient; the next backward() starts from zero

  // Computes the gradients of this scalar (one-element) tensor with respect to every leaf
  // that requires them, and adds them into those leaves' grad().
  // Two threads may run backward() at the same time on graphs that share no node; graphs
  // that share one (the same parameters) need a lock around their backward() calls.
  void backward(const BackwardOptions& options = {}) const;
  // For a non-scalar tensor: backpropagates the given dL/d(this) (same shape as this).
  void backward(const NDArray& grad_output, const BackwardOptions& options = {}) const;

  // Keep this intermediate tensor's gradient after backward() (attention maps use it).
  void retain_grad();
  void register_hook(GradHook hook);

  // The same value, cut from the graph: no gradient flows through the result.
  Tensor detach() const;

  // The op that made this tensor ("" for a leaf), and an optional name for printing.
  std::string_view op() const;
  const std::string& name() const;
  Tensor& set_name(std::string name);

  // The same tensor, not just equal values: both handles share one Node (one value, one
  // gradient). A tied weight is one tensor held by two modules.
  bool same_as(const Tensor& other) const { return defined() && node_ == other.node_; }

  const std::shared_ptr<Node>& node() const { return node_; }
  explicit Tensor(std::shared_ptr<Node> node) : node_(std::move(node)) {}

 private:
  void check_defined(std::string_view what) const;
  std::shared_ptr<Node> node_;
};

// ---- grad mode -------------------------------------------------------------------------------
// Inside a NoGradGuard's scope no graph is recorded: evaluation and optimizer updates
// run faster and keep no memory for backward.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Inside a DetectAnomalyGuard's scope backward() checks every gradient it computes and
// stops at the first NaN or infinity, naming the op that produced it; it also records
// each node's gradient norm for to_dot(). It costs one extra pass per gradient.
bool anomaly_detection_enabled();
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

// ---- making an op ----------------------------------------------------------------------------
// Every differentiable operation, built in or your own, is made the same way: compute the
// value, then hand it to make_op with the inputs and the backward formula.
//
//   Tensor cube(const Tensor& x) {
//     NDArray y = map(x.data(), [](auto v) { return v * v * v; });
//     SavedArray xv(x.data(), "input #0");     // save what backward needs (arrays, not Tensors)
//     // d/dx x^3 = 3 x^2
//     return make_op("cube", y, {x}, [xv](const NDArray& g) -> Grads {
//       return {map(g, xv, [](auto g, auto x) { return g * 3 * x * x; })};
//     });
//   }
//
// If no input requires a gradient (or grad mode is off) no node is recorded. Capture arrays
// in the backward function, never Tensors: a Tensor captured there would keep its own node
// alive in a cycle. Capture an array whose values the backward reads as a SavedArray
// (autograd/saved_array.h): if it is changed in place before backward(), the backward
// stops with an error instead of computing a wrong gradient. Check a custom op with gradcheck
// (autograd/gradcheck.h); an op of the library also gets a row in docs/ops.md, which
// tests/autograd/test_op_table.cpp checks against every make_op call.
Tensor make_op(std::string_view op, NDArray value, std::initializer_list<Tensor> inputs,
               BackwardFn backward);
Tensor make_op(std::string_view op, NDArray value, std::span<const Tensor> inputs,
               BackwardFn backward);

// x's shape as text ("[2,3]"), or "undefined": for an op's error message about its inputs.
std::string shape_or_undefined(const Tensor& x);

// ---- creation ----------------------------------------------------------------------------------
// Leaves with requires_grad false; call .requires_grad_() to make a parameter.
Tensor tensor(std::initializer_list<double> values, DType dtype = kFloat32);
Tensor tensor(std::initializer_list<double> values, const Shape& shape, DType dtype = kFloat32);
Tensor zeros(const Shape& shape, DType dtype = kFloat32);
Tensor ones(const Shape& shape, DType dtype = kFloat32);
Tensor full(const Shape& shape, double value, DType dtype = kFloat32);
Tensor arange(Index n, DType dtype = kFloat32);
Tensor randn(const Shape& shape, Generator& gen, DType dtype = kFloat32);
Tensor rand(const Shape& shape, Generator& gen, DType dtype = kFloat32);  // uniform [0, 1)
Tensor zeros_like(const Tensor& other);

}  // namespace attend

// fmt::print("{}", t) shows the values, shape, dtype and where the tensor came from.
template <>
struct fmt::formatter<attend::Tensor> : fmt::formatter<std::string_view> {
  auto format(const attend::Tensor& t, fmt::format_context& ctx) const
      -> fmt::format_context::iterator;
};
