// The per-parameter state of an optimizer in a StateDict: how entries are named, and how
// load_state() reads them back with checks that name the offending entry.
//
// Parameter i's buffer `b` is saved as "<i>.<b>": "0.momentum_buffer", "2.exp_avg". A
// parameter that was never updated has no entries at all (buffers are created lazily), but
// one that was has every buffer of its optimizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nn/optim/optimizer.h"

namespace attend::optim {

// "<index>.<buffer>"
std::string state_name(std::size_t index, std::string_view buffer);

// Reads a StateDict for load_state(). The constructor checks the names: each must be
// "<parameter index>.<buffer>" for an existing parameter and one of `buffers`, appear once,
// and a parameter with any entry must have all of them. The readers then check each array
// against its parameter. Nothing is changed, so an optimizer can read everything first and
// assign only once all of it is valid.
class StateReader {
 public:
  // optimizer: "Adam", used in error messages as "Adam.load_state: ...".
  StateReader(const StateDict& state, const std::vector<Tensor>& parameters,
              std::string_view optimizer, std::vector<std::string_view> buffers);

  // Whether the checkpoint has state for parameter i (it was updated at least once).
  bool has_state(std::size_t i) const;
  // A copy of buffer `name` of parameter i, in the parameter's dtype (converted like
  // PyTorch does); its shape must be the parameter's.
  NDArray buffer(std::size_t i, std::string_view name) const;
  // A count stored as a 0-d array (Adam's per-parameter "step"): a whole number >= 0.
  std::int64_t count(std::size_t i, std::string_view name) const;

 private:
  const NDArray& find(std::size_t i, std::string_view name) const;

  const StateDict& state_;
  const std::vector<Tensor>& parameters_;
  std::string op_;  // "Adam.load_state"
  std::vector<bool> has_state_;
};

}  // namespace attend::optim
