// What the per-op gradcheck tests share (test_gradcheck_*.cpp). Each op of docs/ops.md has
// one test case named "gradcheck: <op>" holding one or more cases (broadcasting, each
// axis, ...). Every case is a float64 central-difference gradcheck with gradcheck's
// defaults (eps 1e-6, atol 1e-5, rtol 1e-3) unless it states its own options, and fails
// unless the checked graph really contains the op.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "support.h"

namespace attend::testing {

using Inputs = std::vector<Tensor>;

struct OpCase {
  std::string variant;  // what this case covers
  std::function<Tensor(const Inputs&)> f;
  std::vector<Shape> shapes;  // one float64 input requiring a gradient per shape
  // Inputs are kept away from the points where an op has no derivative (relu and abs at 0,
  // clamp at its bounds, sqrt and log at 0).
  enum Domain { kAny, kPositive, kAwayFromZero } domain = kAny;
  GradcheckOptions options = {};
};

// Seeded normal float64 inputs; "away from zero" puts every value at least 0.2 from 0.
inline Inputs make_inputs(const OpCase& c, std::uint64_t seed) {
  Generator gen(seed);
  Inputs in;
  for (const Shape& s : c.shapes) {
    NDArray x = NDArray::normal(s, gen, 0, 1, kFloat64);
    if (c.domain == OpCase::kPositive) x = abs(x) + 0.5;
    if (c.domain == OpCase::kAwayFromZero) x = x + sign(x) * 0.2;
    in.push_back(Tensor(x, true));
  }
  return in;
}

// An int64 tensor of indices (no gradient).
inline Tensor index_tensor(std::initializer_list<double> values, const Shape& shape) {
  return Tensor(NDArray::from_list(values, shape, kInt64));
}

// The gradients of a case's inputs for dL/d(output) = R (seeded), after optionally scaling
// the inputs or the output by 1.5 in place between the forward and backward(); `refusal`
// holds backward()'s error message if it stopped.
struct InPlaceOutcome {
  std::string refusal;
  std::vector<NDArray> grads;
};
enum class InPlaceChange { kNone, kInputs, kOutput };
inline InPlaceOutcome backward_after_change(const OpCase& c, std::uint64_t seed,
                                            InPlaceChange change) {
  Inputs in = make_inputs(c, seed);
  Tensor y = c.f(in);
  Generator gen(seed + 1);
  NDArray r = NDArray::normal(y.shape(), gen, 0, 1, y.dtype());
  // Scaling by 1.5 keeps every input in its domain (positive, away from zero).
  if (change == InPlaceChange::kInputs)
    for (Tensor& x : in) mul_(x.data(), 1.5);
  if (change == InPlaceChange::kOutput) mul_(y.data(), 1.5);
  InPlaceOutcome out;
  try {
    y.backward(r);
  } catch (const Error& e) {
    out.refusal = e.what();
    return out;
  }
  for (const Tensor& x : in) out.grads.push_back(x.grad().defined() ? x.grad().data() : NDArray());
  return out;
}

// An input or the output changed in place after the forward either stops backward() with
// the "modified in place" error, or the op did not save it and the gradients are exactly
// those without the change. A silently different gradient fails.
inline void check_in_place_changes(const OpCase& c, std::uint64_t seed) {
  const InPlaceOutcome reference = backward_after_change(c, seed, InPlaceChange::kNone);
  REQUIRE(reference.refusal.empty());
  for (InPlaceChange change : {InPlaceChange::kInputs, InPlaceChange::kOutput}) {
    INFO((change == InPlaceChange::kInputs ? "inputs" : "output") << " changed in place");
    const InPlaceOutcome changed = backward_after_change(c, seed, change);
    if (!changed.refusal.empty()) {
      CHECK_THAT(changed.refusal, Catch::Matchers::Contains("backward of ") &&
                                      Catch::Matchers::Contains("was modified in place"));
      continue;
    }
    REQUIRE(changed.grads.size() == reference.grads.size());
    for (std::size_t i = 0; i < changed.grads.size(); ++i) {
      INFO("gradient of input " << i);
      REQUIRE(changed.grads[i].defined() == reference.grads[i].defined());
      if (reference.grads[i].defined()) check_close(changed.grads[i], reference.grads[i], 0);
    }
  }
}

// Runs every case of `op` through gradcheck and through check_in_place_changes.
inline void check_op(const std::string& op, const std::vector<OpCase>& cases) {
  std::uint64_t seed = 100;
  for (const OpCase& c : cases) {
    const std::uint64_t case_seed = seed++;
    Inputs in = make_inputs(c, case_seed);
    GradcheckResult r = gradcheck(c.f, in, c.options);
    INFO(op << " (" << c.variant << "): " << r.report);
    CHECK(r.ok);
    // The case really exercises the op it is filed under.
    CHECK(std::find(r.ops.begin(), r.ops.end(), op) != r.ops.end());
    check_in_place_changes(c, case_seed);
  }
}

}  // namespace attend::testing
