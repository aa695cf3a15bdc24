// A float64 central-difference gradcheck of every differentiable op (eps 1e-6, atol 1e-5,
// rtol 1e-3: gradcheck's defaults), including broadcasting, batched matmul and reductions
// over each axis. Inputs are seeded and kept away from the points where an op has no
// derivative (relu and abs at 0, clamp at its bounds, sqrt and log at 0, ties in max).
//
// The last test reads the engine's sources and fails if an op made with make_op("name", ...)
// has no case in this table.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "nn/conv.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/pool.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;

namespace {

using Inputs = std::vector<Tensor>;

struct OpCase {
  std::string op;       // the name given to make_op
  std::string variant;  // what this case covers
  std::function<Tensor(const Inputs&)> f;
  std::vector<Shape> shapes;
  enum Domain { kAny, kPositive, kAwayFromZero } domain = kAny;
  GradcheckOptions options = {};
};

// Seeded float64 inputs; "away from zero" puts every value at least 0.2 from 0.
Inputs make_inputs(const OpCase& c, std::uint64_t seed) {
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

Tensor ids(std::initializer_list<double> values, const Shape& shape) {
  return Tensor(NDArray::from_list(values, shape, kInt64));
}

std::vector<OpCase> op_cases() {
  using D = OpCase::Domain;
  return {
      // ---- elementwise, with broadcasting ----
      {"add", "same shape", [](const Inputs& x) { return x[0] + x[1]; }, {{2, 3}, {2, 3}}},
      {"add",
       "broadcast row and column",
       [](const Inputs& x) { return x[0] + x[1]; },
       {{4, 1}, {3}}},
      {"sub", "broadcast", [](const Inputs& x) { return x[0] - x[1]; }, {{2, 3, 4}, {3, 1}}},
      {"mul", "broadcast", [](const Inputs& x) { return x[0] * x[1]; }, {{2, 1, 4}, {3, 1}}},
      {"mul", "by a constant", [](const Inputs& x) { return x[0] * 2.5; }, {{5}}},
      {"div",
       "broadcast",
       [](const Inputs& x) { return x[0] / x[1]; },
       {{2, 3}, {3}},
       D::kAwayFromZero},
      {"neg", "", [](const Inputs& x) { return -x[0]; }, {{3, 2}}},
      {"exp", "", [](const Inputs& x) { return exp(x[0]); }, {{3, 2}}},
      {"log", "", [](const Inputs& x) { return log(x[0]); }, {{3, 2}}, D::kPositive},
      {"sqrt", "", [](const Inputs& x) { return sqrt(x[0]); }, {{3, 2}}, D::kPositive},
      {"abs", "", [](const Inputs& x) { return abs(x[0]); }, {{3, 2}}, D::kAwayFromZero},
      {"sin", "", [](const Inputs& x) { return sin(x[0]); }, {{4}}},
      {"cos", "", [](const Inputs& x) { return cos(x[0]); }, {{4}}},
      {"tanh", "", [](const Inputs& x) { return tanh(x[0]); }, {{3, 2}}},
      {"sigmoid", "", [](const Inputs& x) { return sigmoid(x[0]); }, {{3, 2}}},
      {"relu", "", [](const Inputs& x) { return relu(x[0]); }, {{3, 4}}, D::kAwayFromZero},
      {"gelu", "", [](const Inputs& x) { return gelu(x[0]); }, {{3, 4}}},
      {"pow", "exponent 3", [](const Inputs& x) { return pow(x[0], 3); }, {{4}}},
      {"pow",
       "exponent -0.5",
       [](const Inputs& x) { return pow(x[0], -0.5); },
       {{4}},
       D::kPositive},
      {"clamp",
       "inside and outside the bounds",
       [](const Inputs& x) { return clamp(x[0], -1, 1); },
       {{3, 3}},
       D::kAwayFromZero},
      {"where",
       "broadcast condition",
       [](const Inputs& x) {
         return where(tensor({1, 0, 1}, kFloat64), x[0], x[1]);
       },
       {{2, 3}, {2, 3}}},
      {"masked_fill",
       "mask the last key",
       [](const Inputs& x) {
         return masked_fill(x[0], tensor({0, 0, 1}, kFloat64), -3);
       },
       {{2, 3}}},
      // Through float32 the value is rounded to 7 digits: a step of 1e-6 would measure the
      // rounding, so this case uses eps 1e-2 (exact for a linear function) and atol 1e-4.
      {"to_dtype",
       "float64 to float32 and back",
       [](const Inputs& x) { return to_dtype(to_dtype(x[0], kFloat32), kFloat64); },
       {{3}},
       D::kAny,
       {.eps = 1e-2, .atol = 1e-4}},
      // ---- reductions, over each axis ----
      {"sum", "all elements", [](const Inputs& x) { return sum(x[0]); }, {{2, 3}}},
      {"mean", "all elements", [](const Inputs& x) { return mean(x[0]); }, {{2, 3}}},
      {"sum_axis", "axis 0", [](const Inputs& x) { return sum(x[0], 0); }, {{2, 3, 4}}},
      {"sum_axis",
       "axis 1 keepdim",
       [](const Inputs& x) { return sum(x[0], 1, true); },
       {{2, 3, 4}}},
      {"sum_axis", "axis -1", [](const Inputs& x) { return sum(x[0], -1); }, {{2, 3, 4}}},
      {"mean_axis", "axis 0", [](const Inputs& x) { return mean(x[0], 0); }, {{2, 3, 4}}},
      {"mean_axis",
       "axis 2 keepdim",
       [](const Inputs& x) { return mean(x[0], 2, true); },
       {{2, 3, 4}}},
      {"max", "axis 0", [](const Inputs& x) { return max(x[0], 0); }, {{3, 4}}},
      {"max", "axis 1 keepdim", [](const Inputs& x) { return max(x[0], 1, true); }, {{3, 4}}},
      {"logsumexp", "axis 0", [](const Inputs& x) { return logsumexp(x[0], 0); }, {{3, 4}}},
      {"logsumexp",
       "axis 1 keepdim",
       [](const Inputs& x) { return logsumexp(x[0], 1, true); },
       {{3, 4}}},
      {"softmax", "last axis", [](const Inputs& x) { return softmax(x[0], -1); }, {{3, 4}}},
      {"softmax", "axis 0 of 3-D", [](const Inputs& x) { return softmax(x[0], 0); }, {{3, 2, 2}}},
      {"log_softmax", "last axis", [](const Inputs& x) { return log_softmax(x[0], -1); }, {{3, 4}}},
      {"log_softmax",
       "middle axis",
       [](const Inputs& x) { return log_softmax(x[0], 1); },
       {{2, 3, 2}}},
      // ---- shape ----
      {"reshape",
       "",
       [](const Inputs& x) {
         return reshape(x[0], {3, -1}) * x[1];
       },
       {{2, 3}, {3, 2}}},
      {"permute",
       "",
       [](const Inputs& x) {
         return permute(x[0], {2, 0, 1});
       },
       {{2, 3, 4}}},
      {"transpose", "", [](const Inputs& x) { return transpose(x[0], 0, 2); }, {{2, 3, 4}}},
      {"squeeze", "", [](const Inputs& x) { return squeeze(x[0], 1); }, {{3, 1, 2}}},
      {"unsqueeze", "", [](const Inputs& x) { return unsqueeze(x[0], 0) * x[1]; }, {{3}, {2, 3}}},
      {"slice", "with step", [](const Inputs& x) { return slice(x[0], 1, 1, 5, 2); }, {{2, 5}}},
      {"slice", "negative start", [](const Inputs& x) { return slice(x[0], 0, -2, 3); }, {{3, 2}}},
      {"concat",
       "three parts",
       [](const Inputs& x) {
         return concat({x[0], x[1], x[2]}, 1);
       },
       {{2, 1}, {2, 3}, {2, 2}}},
      {"concat",
       "stack (composed)",
       [](const Inputs& x) {
         return stack({x[0], x[1]}, 1);
       },
       {{2, 3}, {2, 3}}},
      {"unbind",
       "every part used, along the middle axis",
       [](const Inputs& x) {
         std::vector<Tensor> parts = unbind(x[0], 1);
         return parts[0] * 2.0 + parts[1] * parts[2];
       },
       {{2, 3, 2}}},
      {"unbind_part",
       "only some parts used",
       [](const Inputs& x) { return tanh(unbind(x[0], 0)[1]); },
       {{3, 4}}},
      {"broadcast_to",
       "",
       [](const Inputs& x) {
         return broadcast_to(x[0], {4, 2, 3});
       },
       {{2, 1}}},
      // ---- indexing ----
      {"index_select",
       "embedding lookup with a repeated id",
       [](const Inputs& x) {
         return index_select(x[0], 0, ids({3, 0, 3, 1}, {2, 2}));
       },
       {{4, 3}}},
      {"index_select",
       "middle axis",
       [](const Inputs& x) {
         return index_select(x[0], 1, ids({2, 0}, {2}));
       },
       {{2, 3, 2}}},
      {"gather",
       "target class per row",
       [](const Inputs& x) {
         return gather(x[0], 1, ids({2, 0, 1}, {3, 1}));
       },
       {{3, 4}}},
      // ---- matmul ----
      {"matmul", "2-D", [](const Inputs& x) { return matmul(x[0], x[1]); }, {{3, 4}, {4, 2}}},
      {"matmul",
       "batched 3-D",
       [](const Inputs& x) { return matmul(x[0], x[1]); },
       {{2, 3, 4}, {2, 4, 5}}},
      {"matmul",
       "batch broadcast against 2-D",
       [](const Inputs& x) { return matmul(x[0], x[1]); },
       {{2, 3, 4}, {4, 2}}},
      {"matmul",
       "batch broadcast of size 1",
       [](const Inputs& x) { return matmul(x[0], x[1]); },
       {{1, 3, 4}, {2, 4, 2}}},
      {"matmul",
       "4-D (attention heads)",
       [](const Inputs& x) { return matmul(x[0], transpose(x[1])); },
       {{2, 2, 3, 4}, {2, 2, 3, 4}}},
      // ---- nn ops with their own backward ----
      {"linear",
       "with bias, 3-D input",
       [](const Inputs& x) { return nn::linear(x[0], x[1], x[2]); },
       {{2, 3, 4}, {5, 4}, {5}}},
      {"linear",
       "without bias",
       [](const Inputs& x) { return nn::linear(x[0], x[1], Tensor()); },
       {{3, 4}, {2, 4}}},
      // (No padding id here: the padding row's gradient is zeroed on purpose, which a
      // finite difference would not see; tests/nn checks that row separately.)
      {"embedding",
       "repeated ids",
       [](const Inputs& x) {
         return nn::embedding(ids({1, 3, 1, 0}, {2, 2}), x[0]);
       },
       {{4, 3}}},
      {"layer_norm",
       "3-D input",
       [](const Inputs& x) { return nn::layer_norm(x[0], x[1], x[2]); },
       {{2, 3, 5}, {5}, {5}}},
      {"cross_entropy",
       "mean with an ignored position",
       [](const Inputs& x) {
         return nn::cross_entropy(x[0], ids({2, -100, 0, 1}, {4}));
       },
       {{4, 3}}},
      {"cross_entropy",
       "label smoothing, 3-D logits",
       [](const Inputs& x) {
         return nn::cross_entropy(x[0], ids({2, 0, 1, 1, 0, 2}, {2, 3}), {.label_smoothing = 0.1});
       },
       {{2, 3, 3}}},
      {"cross_entropy",
       "sum",
       [](const Inputs& x) {
         return nn::cross_entropy(x[0], ids({1, 0}, {2}), {.reduction = nn::Reduction::kSum});
       },
       {{2, 4}}},
      {"cross_entropy",
       "none (one loss per position)",
       [](const Inputs& x) {
         return nn::cross_entropy(x[0], ids({1, 0, 2}, {3}), {.reduction = nn::Reduction::kNone});
       },
       {{3, 4}}},
      {"conv2d",
       "stride 2, padding 1, with bias",
       [](const Inputs& x) { return nn::conv2d(x[0], x[1], x[2], 2, 1); },
       {{2, 2, 5, 4}, {3, 2, 3, 3}, {3}}},
      {"conv2d",
       "1x1 kernel, no bias",
       [](const Inputs& x) { return nn::conv2d(x[0], x[1], Tensor()); },
       {{1, 3, 2, 3}, {2, 3, 1, 1}}},
      // Normal inputs have no ties (nor two values within eps of each other, almost surely).
      {"max_pool2d",
       "overlapping windows",
       [](const Inputs& x) { return nn::max_pool2d(x[0], 2, 1); },
       {{1, 2, 3, 4}}},
      {"avg_pool2d",
       "windows side by side",
       [](const Inputs& x) { return nn::avg_pool2d(x[0], 2); },
       {{2, 1, 4, 5}}},
  };
}

}  // namespace

TEST_CASE("gradcheck of every op", "[autograd][gradcheck]") {
  std::uint64_t seed = 100;
  for (const OpCase& c : op_cases()) {
    Inputs in = make_inputs(c, seed++);
    GradcheckResult r = gradcheck(c.f, in, c.options);
    INFO(c.op << " (" << c.variant << "): " << r.report);
    CHECK(r.ok);
    // The case really exercises the op it is filed under.
    CHECK(std::find(r.ops.begin(), r.ops.end(), c.op) != r.ops.end());
  }
}

TEST_CASE("every op in the sources has a gradcheck case", "[autograd][gradcheck]") {
  std::set<std::string> covered;
  for (const OpCase& c : op_cases()) covered.insert(c.op);
  const std::string call = "make_op(\"";
  std::set<std::string> found;
  for (const char* folder : {"autograd", "nn"}) {
    std::filesystem::path dir = std::filesystem::path(ATTEND_SOURCE_DIR) / folder;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().extension() != ".cpp") continue;
      std::ifstream file(entry.path());
      std::stringstream text;
      text << file.rdbuf();
      std::string source = text.str();
      // Every make_op("name" in the file; the name ends at the closing quote.
      for (std::size_t at = source.find(call); at != std::string::npos;
           at = source.find(call, at + 1)) {
        std::size_t begin = at + call.size(), end = source.find('"', begin);
        found.insert(source.substr(begin, end - begin));
      }
    }
  }
  REQUIRE(found.size() >= 30);  // the scan itself works
  for (const std::string& op : found) {
    INFO("op '" << op << "' is made with make_op but has no gradcheck case");
    CHECK(covered.count(op) == 1);
  }
}
