#include "autograd/tensor.h"

#include "tensor/parallel.h"
#include "tensor/print.h"
#include "tensor/random.h"

namespace attend {

// ---- Node ------------------------------------------------------------------------------------

Node::~Node() {
  // Destroying the last handle to a long chain (a 100,000-step loop) would otherwise run
  // one destructor inside another 100,000 deep and overflow the stack. Instead the first
  // destructor owns a work list: nested destructors only move their inputs onto it, and
  // the first one releases them one at a time.
  thread_local std::vector<std::shared_ptr<Node>>* work = nullptr;
  if (inputs.empty()) return;
  if (work != nullptr) {
    for (auto& input : inputs) work->push_back(std::move(input));
    return;
  }
  std::vector<std::shared_ptr<Node>> list = std::move(inputs);
  work = &list;
  while (!list.empty()) {
    std::shared_ptr<Node> next = std::move(list.back());
    list.pop_back();
    next.reset();  // may run ~Node, which appends that node's inputs to `list`
  }
  work = nullptr;
}

// ---- Tensor ----------------------------------------------------------------------------------

Tensor::Tensor(NDArray data, bool requires_grad) : node_(std::make_shared<Node>()) {
  attend::check_defined(data, "Tensor", "data");
  node_->data = std::move(data);
  requires_grad_(requires_grad);
}

void Tensor::check_defined(std::string_view what) const {
  if (!node_) fail("{}: the tensor is undefined (default-constructed)", what);
}

NDArray& Tensor::data() const {
  check_defined("data");
  return node_->data;
}

bool Tensor::requires_grad() const {
  return node_ && node_->requires_grad;
}

Tensor& Tensor::requires_grad_(bool enabled) {
  check_defined("requires_grad_");
  if (!is_leaf())
    fail(
        "requires_grad_: only leaf tensors can be marked (this one comes from '{}'; use "
        "detach() to make a leaf of it)",
        node_->op);
  if (enabled && !is_floating(node_->data.dtype()))
    fail("requires_grad_: int64 tensors cannot have gradients");
  node_->requires_grad = enabled;
  return *this;
}

bool Tensor::is_leaf() const {
  return node_ && node_->op.empty();
}

Tensor Tensor::grad() const {
  check_defined("grad");
  return node_->grad.defined() ? Tensor(node_->grad) : Tensor();
}

void Tensor::zero_grad() {
  check_defined("zero_grad");
  node_->grad = NDArray();
}

void Tensor::retain_grad() {
  check_defined("retain_grad");
  if (!node_->requires_grad)
    fail("retain_grad: this tensor does not require grad, so it will get no gradient");
  node_->retains_grad = true;
}

void Tensor::register_hook(GradHook hook) {
  check_defined("register_hook");
  if (!node_->requires_grad)
    fail("register_hook: this tensor does not require grad, so the hook would never run");
  node_->hooks.push_back(std::move(hook));
}

Tensor Tensor::detach() const {
  check_defined("detach");
  return Tensor(node_->data);
}

std::string_view Tensor::op() const {
  check_defined("op");
  return node_->op;
}

const std::string& Tensor::name() const {
  check_defined("name");
  return node_->name;
}

Tensor& Tensor::set_name(std::string name) {
  check_defined("set_name");
  node_->name = std::move(name);
  return *this;
}

// ---- grad mode -------------------------------------------------------------------------------
namespace {
thread_local bool g_grad_enabled = true;
thread_local bool g_detect_anomaly = false;

// run_both (tensor/parallel.h) runs its second piece with these two settings of the caller's.
std::uint64_t read_grad_settings() {
  return (g_grad_enabled ? 1u : 0u) | (g_detect_anomaly ? 2u : 0u);
}
void write_grad_settings(std::uint64_t bits) {
  g_grad_enabled = (bits & 1u) != 0;
  g_detect_anomaly = (bits & 2u) != 0;
}
const bool kGradSettingsCarried =
    (carry_thread_settings({read_grad_settings, write_grad_settings}), true);
}  // namespace

bool grad_enabled() {
  return g_grad_enabled;
}
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) {
  g_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() {
  g_grad_enabled = previous_;
}

bool anomaly_detection_enabled() {
  return g_detect_anomaly;
}
DetectAnomalyGuard::DetectAnomalyGuard() : previous_(g_detect_anomaly) {
  g_detect_anomaly = true;
}
DetectAnomalyGuard::~DetectAnomalyGuard() {
  g_detect_anomaly = previous_;
}

// ---- make_op ---------------------------------------------------------------------------------

std::string shape_or_undefined(const Tensor& x) {
  return x.defined() ? fmt::format("{}", x.shape()) : std::string("undefined");
}

Tensor make_op(std::string_view op, NDArray value, std::span<const Tensor> inputs,
               BackwardFn backward) {
  bool any_requires = false;
  for (const Tensor& input : inputs) {
    if (!input.defined()) fail("{}: an input tensor is undefined", op);
    any_requires = any_requires || input.requires_grad();
  }
  auto node = std::make_shared<Node>();
  node->data = std::move(value);
  if (any_requires && grad_enabled()) {
    node->requires_grad = true;
    node->op = op;
    node->inputs.reserve(inputs.size());
    for (const Tensor& input : inputs) node->inputs.push_back(input.node());
    node->backward = std::move(backward);
  }
  return Tensor(std::move(node));
}

Tensor make_op(std::string_view op, NDArray value, std::initializer_list<Tensor> inputs,
               BackwardFn backward) {
  return make_op(op, std::move(value), std::span<const Tensor>(inputs.begin(), inputs.size()),
                 std::move(backward));
}

// ---- creation --------------------------------------------------------------------------------

Tensor tensor(std::initializer_list<double> values, DType dtype) {
  return Tensor(NDArray::from_list(values, dtype));
}
Tensor tensor(std::initializer_list<double> values, const Shape& shape, DType dtype) {
  return Tensor(NDArray::from_list(values, shape, dtype));
}
Tensor zeros(const Shape& shape, DType dtype) {
  return Tensor(NDArray::zeros(shape, dtype));
}
Tensor ones(const Shape& shape, DType dtype) {
  return Tensor(NDArray::ones(shape, dtype));
}
Tensor full(const Shape& shape, double value, DType dtype) {
  return Tensor(NDArray::full(shape, value, dtype));
}
Tensor arange(Index n, DType dtype) {
  return Tensor(NDArray::arange(n, dtype));
}
Tensor randn(const Shape& shape, Generator& gen, DType dtype) {
  return Tensor(NDArray::normal(shape, gen, 0, 1, dtype));
}
Tensor rand(const Shape& shape, Generator& gen, DType dtype) {
  return Tensor(NDArray::uniform(shape, gen, 0, 1, dtype));
}
Tensor zeros_like(const Tensor& other) {
  return Tensor(NDArray::zeros_like(other.data()));
}

}  // namespace attend

auto fmt::formatter<attend::Tensor>::format(const attend::Tensor& t, fmt::format_context& ctx) const
    -> fmt::format_context::iterator {
  std::string text;
  if (!t.defined()) {
    text = "Tensor(undefined)";
  } else {
    std::string origin;
    if (!t.op().empty())
      origin = fmt::format(", op={}", t.op());
    else if (t.requires_grad())
      origin = ", requires_grad=true";
    std::string name = t.name().empty() ? "" : fmt::format(", name={}", t.name());
    text = fmt::format("Tensor({}, shape={}, dtype={}{}{})", attend::format_values(t.data(), 7),
                       t.shape(), attend::dtype_name(t.dtype()), origin, name);
  }
  return fmt::formatter<std::string_view>::format(text, ctx);
}
