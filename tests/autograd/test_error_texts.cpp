// Every public op names itself and the offending values in its error message, not a helper
// it happens to call (issue 15: a bad axis in concat was reported from `size`).
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {
// The message of the Error f throws starts with "<op>:" and contains `detail`.
template <class F>
void check_names(const std::string& op, const std::string& detail, F&& f) {
  const std::string message = error_message(f);
  INFO(message);
  CHECK_THAT(message, StartsWith(op + ":") && Contains(detail));
}
}  // namespace

TEST_CASE("error texts: a bad axis is reported by the op that got it", "[autograd]") {
  const Tensor x = zeros({2, 3});
  const Tensor y = zeros({2, 3});
  const std::string bad = "axis 5 is out of range for an array with 2 dimensions";
  check_names("concat", bad, [&] { concat({x, y}, 5); });
  check_names("stack", "axis 5", [&] { stack({x, y}, 5); });
  check_names("sum", bad, [&] { sum(x, 5); });
  check_names("mean", bad, [&] { mean(x, 5); });
  check_names("max", bad, [&] { max(x, 5); });
  check_names("logsumexp", bad, [&] { logsumexp(x, 5); });
  check_names("argmax", bad, [&] { argmax(x, 5); });
  check_names("softmax", bad, [&] { softmax(x, 5); });
  check_names("log_softmax", bad, [&] { log_softmax(x, 5); });
  check_names("slice", bad, [&] { slice(x, 5, 0, 1); });
  check_names("split", bad, [&] { split(x, std::vector<Index>{1, 1}, 5); });
  check_names("chunk", bad, [&] { chunk(x, 2, 5); });
  check_names("unbind", bad, [&] { unbind(x, 5); });
  check_names("transpose", "axis 5", [&] { transpose(x, 0, 5); });
  check_names("permute", "axis 5", [&] { permute(x, {0, 5}); });
  check_names("squeeze", "axis 5", [&] { squeeze(x, 5); });
  check_names("unsqueeze", "axis 5", [&] { unsqueeze(x, 5); });
  check_names("index_select", "axis 5", [&] { index_select(x, 5, Tensor(ids({0}, {1}))); });
  check_names("gather", "axis 5", [&] { gather(x, 5, Tensor(ids({0, 0, 0, 0, 0, 0}, {2, 3}))); });
}

TEST_CASE("error texts: bad shapes and indices name the op and the values", "[autograd]") {
  const Tensor x = zeros({2, 3});
  check_names("reshape", "[2,3]", [&] { reshape(x, {4, 2}); });
  check_names("concat", "[2,3]", [&] { concat({x, zeros({2, 4})}, 0); });
  check_names("split", "add up to 2", [&] { split(x, std::vector<Index>{1, 1}, 1); });
  check_names("chunk", "2 equal pieces", [&] { chunk(x, 2, 1); });
  check_names("index_select", "7", [&] { index_select(x, 1, Tensor(ids({7}, {1}))); });
  check_names("matmul", "[2,3]", [&] { matmul(x, zeros({2, 3})); });
  check_names("add", "[2,3]", [&] { add(x, zeros({4})); });
  check_names("broadcast_to", "[2,3]", [&] { broadcast_to(x, {4, 3}); });
}
