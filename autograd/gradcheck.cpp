#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "tensor/elementwise.h"
#include "tensor/random.h"
#include "tensor/reduce.h"

namespace attend {
namespace {

// L = sum(output * R), in float64.
double projected(const Tensor& output, const NDArray& r) {
  return sum(output.data() * r).item();
}

std::string index_text(Index flat, const Shape& shape) {
  std::vector<Index> index(static_cast<std::size_t>(shape.ndim()));
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(index, ","));
}

std::vector<Index> elements_to_check(Index numel, const GradcheckOptions& options, int input) {
  std::vector<Index> all(static_cast<std::size_t>(numel));
  for (Index j = 0; j < numel; ++j) all[j] = j;
  if (options.max_elements_per_input <= 0 || numel <= options.max_elements_per_input) return all;
  Generator gen(options.seed * 7919 + static_cast<std::uint64_t>(input));
  std::vector<Index> order = gen.permutation(numel);
  order.resize(static_cast<std::size_t>(options.max_elements_per_input));
  std::sort(order.begin(), order.end());
  return order;
}

struct Failure {
  int input;
  Index element;
  double analytic, numeric, error;
};

}  // namespace

std::vector<std::string> graph_ops(const Tensor& t) {
  std::set<std::string> names;
  std::vector<const Node*> stack{t.node().get()};
  std::set<const Node*> seen{t.node().get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!n->op.empty()) names.insert(n->op);
    for (const auto& in : n->inputs)
      if (seen.insert(in.get()).second) stack.push_back(in.get());
  }
  return {names.begin(), names.end()};
}

namespace {

// Every input that requires a gradient must be float64; their old gradients are dropped.
void check_inputs(const std::vector<Tensor>& inputs) {
  bool any = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined()) fail("gradcheck: input {} is undefined", i);
    if (!x.requires_grad()) continue;
    any = true;
    if (x.dtype() != kFloat64)
      fail(
          "gradcheck: input {} is {}; finite differences need float64 inputs (convert with "
          "to_dtype or create them with kFloat64)",
          i, dtype_name(x.dtype()));
    x.node()->grad = NDArray();
  }
  if (!any) fail("gradcheck: no input has requires_grad set, so there is nothing to check");
}

void check_deterministic(const TensorFunction& f, const std::vector<Tensor>& inputs,
                         const NDArray& r, double base) {
  double again = projected(f(inputs), r);
  if (std::abs(again - base) > 1e-12 * std::max(1.0, std::abs(base)))
    fail(
        "gradcheck: the function is not deterministic (two calls gave {} and {}); "
        "switch off dropout and random sampling, or fix their seed inside the function",
        base, again);
}

// Compares the analytic gradient of input i (already in its .grad) with central
// differences, element by element; disagreements go to `failures`.
void compare_input(const TensorFunction& f, const std::vector<Tensor>& inputs, std::size_t i,
                   const NDArray& r, const GradcheckOptions& options, GradcheckResult& result,
                   std::vector<Failure>& failures) {
  const Tensor& x = inputs[i];
  const NDArray analytic = x.node()->grad;  // undefined means zero: L does not depend on x
  double* values = x.data().data<double>();
  for (Index j : elements_to_check(x.numel(), options, static_cast<int>(i))) {
    const double saved = values[j];
    values[j] = saved + options.eps;
    const double plus = projected(f(inputs), r);
    values[j] = saved - options.eps;
    const double minus = projected(f(inputs), r);
    values[j] = saved;
    const double numeric = (plus - minus) / (2 * options.eps);
    const double a = analytic.defined() ? analytic.data<double>()[j] : 0.0;
    const double error = std::abs(a - numeric);
    result.elements_checked++;
    result.max_abs_error = std::max(result.max_abs_error, error);
    result.max_rel_error =
        std::max(result.max_rel_error, error / std::max(std::abs(numeric), options.atol));
    if (!(error <= options.atol + options.rtol * std::abs(numeric)))
      failures.push_back({static_cast<int>(i), j, a, numeric, error});
  }
}

// "gradcheck passed: ..." or "gradcheck FAILED: ..." with the first five disagreements.
std::string report_text(const GradcheckResult& result, const std::vector<Failure>& failures,
                        const std::vector<Tensor>& inputs, int checked_inputs,
                        const GradcheckOptions& options) {
  std::string summary = fmt::format(
      "{} elements of {} inputs checked (eps {:g}, atol {:g}, rtol {:g}); largest absolute error "
      "{:.3e}, largest relative error {:.3e}",
      result.elements_checked, checked_inputs, options.eps, options.atol, options.rtol,
      result.max_abs_error, result.max_rel_error);
  if (failures.empty()) return "gradcheck passed: " + summary;
  std::string report = fmt::format("gradcheck FAILED: {} of {} elements disagree.\n",
                                   failures.size(), result.elements_checked);
  for (std::size_t k = 0; k < std::min<std::size_t>(failures.size(), 5); ++k) {
    const Failure& fl = failures[k];
    const Tensor& x = inputs[fl.input];
    report += fmt::format(
        "  input {} (shape {}) element {}: analytic {:.8g}, numeric {:.8g}, |difference| {:.3e} "
        "> {:.3e}\n",
        fl.input, x.shape(), index_text(fl.element, x.shape()), fl.analytic, fl.numeric, fl.error,
        options.atol + options.rtol * std::abs(fl.numeric));
  }
  if (failures.size() > 5) report += fmt::format("  ... and {} more\n", failures.size() - 5);
  return report + "  " + summary;
}

}  // namespace

GradcheckResult gradcheck(const TensorFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  check_inputs(inputs);

  // Analytic gradient of L = sum(output * R).
  Tensor output = f(inputs);
  if (output.dtype() != kFloat64)
    fail(
        "gradcheck: the function returned {}; with float64 inputs it must compute in float64 "
        "(a float32 parameter or constant inside it?)",
        dtype_name(output.dtype()));
  Generator gen(options.seed + 0x5eed);
  NDArray r = NDArray::normal(output.shape(), gen, 0, 1, kFloat64);
  GradcheckResult result;
  if (output.requires_grad()) {
    result.ops = graph_ops(output);
    output.backward(r);
  }
  const double base = projected(output, r);

  // Numeric gradient, with the graph switched off.
  NoGradGuard no_grad;
  check_deterministic(f, inputs, r, base);
  std::vector<Failure> failures;
  int checked_inputs = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    ++checked_inputs;
    compare_input(f, inputs, i, r, options, result, failures);
  }
  result.ok = failures.empty();
  result.report = report_text(result, failures, inputs, checked_inputs, options);
  return result;
}

}  // namespace attend
