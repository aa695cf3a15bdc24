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

// Runs every case of `op` through gradcheck.
inline void check_op(const std::string& op, const std::vector<OpCase>& cases) {
  std::uint64_t seed = 100;
  for (const OpCase& c : cases) {
    Inputs in = make_inputs(c, seed++);
    GradcheckResult r = gradcheck(c.f, in, c.options);
    INFO(op << " (" << c.variant << "): " << r.report);
    CHECK(r.ok);
    // The case really exercises the op it is filed under.
    CHECK(std::find(r.ops.begin(), r.ops.end(), op) != r.ops.end());
  }
}

}  // namespace attend::testing
