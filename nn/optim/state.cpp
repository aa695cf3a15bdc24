#include "nn/optim/state.h"

#include <charconv>
#include <cmath>

namespace attend::optim {

std::string state_name(std::size_t index, std::string_view buffer) {
  return fmt::format("{}.{}", index, buffer);
}

namespace {

// Splits "12.exp_avg" into 12 and "exp_avg"; false if the name does not have that form
// (the index must be written as state_name writes it: no sign, no leading zeros).
bool parse_state_name(const std::string& name, std::size_t& index, std::string_view& buffer) {
  const std::size_t dot = name.find('.');
  if (dot == std::string::npos || dot == 0) return false;
  auto [end, error] = std::from_chars(name.data(), name.data() + dot, index);
  if (error != std::errc() || end != name.data() + dot) return false;
  buffer = std::string_view(name).substr(dot + 1);
  return !buffer.empty() && state_name(index, buffer) == name;
}

std::string quoted_list(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", name);
  return out;
}

}  // namespace

StateReader::StateReader(const StateDict& state, const std::vector<Tensor>& parameters,
                         std::string_view optimizer, std::vector<std::string_view> buffers)
    : state_(state),
      parameters_(parameters),
      op_(fmt::format("{}.load_state", optimizer)),
      has_state_(parameters.size(), false) {
  const std::string kept =
      buffers.empty() ? fmt::format("{} keeps no state with these options", optimizer)
                      : fmt::format("{} keeps {} per parameter", optimizer, quoted_list(buffers));
  for (std::size_t e = 0; e < state.size(); ++e) {
    const std::string& name = state[e].first;
    std::size_t index = 0;
    std::string_view buffer;
    if (!parse_state_name(name, index, buffer))
      fail("{}: optimizer state '{}' is not named '<parameter index>.<buffer>' ({})", op_, name,
           kept);
    if (index >= parameters.size())
      fail("{}: optimizer state '{}' is for parameter {}, but the optimizer has {} parameters", op_,
           name, index, parameters.size());
    bool known = false;
    for (std::string_view b : buffers) known = known || b == buffer;
    if (!known) fail("{}: unknown optimizer state '{}' ({})", op_, name, kept);
    for (std::size_t earlier = 0; earlier < e; ++earlier)
      if (state[earlier].first == name)
        fail("{}: optimizer state '{}' appears twice in the checkpoint", op_, name);
    has_state_[index] = true;
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (!has_state_[i]) continue;
    for (std::string_view buffer : buffers) {
      const std::string name = state_name(i, buffer);
      bool found = false;
      for (const auto& entry : state) found = found || entry.first == name;
      if (!found)
        fail(
            "{}: optimizer state '{}' is missing (the checkpoint has other state for "
            "parameter {}, and {})",
            op_, name, i, kept);
    }
  }
}

bool StateReader::has_state(std::size_t i) const {
  return has_state_.at(i);
}

const NDArray& StateReader::find(std::size_t i, std::string_view buffer) const {
  const std::string name = state_name(i, buffer);
  for (const auto& [entry_name, array] : state_) {
    if (entry_name != name) continue;
    if (!array.defined()) fail("{}: optimizer state '{}' is undefined", op_, name);
    if (!is_floating(array.dtype()) && array.ndim() > 0)
      fail("{}: optimizer state '{}' is {}; it must be float32 or float64", op_, name,
           dtype_name(array.dtype()));
    return array;
  }
  fail("{}: optimizer state '{}' is missing", op_, name);
}

NDArray StateReader::buffer(std::size_t i, std::string_view name) const {
  const NDArray& array = find(i, name);
  const NDArray& value = parameters_[i].data();
  if (array.shape() != value.shape())
    fail("{}: optimizer state '{}' has shape {} in the checkpoint but the parameter is {}", op_,
         state_name(i, name), array.shape(), value.shape());
  return array.dtype() == value.dtype() ? array.clone() : array.to(value.dtype());
}

std::int64_t StateReader::count(std::size_t i, std::string_view name) const {
  const NDArray& array = find(i, name);
  if (array.ndim() != 0)
    fail("{}: optimizer state '{}' must be a 0-d array holding a count, got shape {}", op_,
         state_name(i, name), array.shape());
  const double value = array.item();
  // 2^53: every whole number below it is exact in float64.
  if (!(value >= 0) || value > 9007199254740992.0 || value != std::floor(value))
    fail("{}: optimizer state '{}' must be a whole number >= 0, got {}", op_, state_name(i, name),
         value);
  return static_cast<std::int64_t>(value);
}

}  // namespace attend::optim
