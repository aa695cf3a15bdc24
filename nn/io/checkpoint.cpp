#include "nn/io/checkpoint.h"

#include <cstring>
#include <map>

#include "nn/io/checkpoint_file.h"
#include "tensor/elementwise.h"

namespace attend::nn {
namespace {

NDArray int64_scalar(std::int64_t value) {
  NDArray out = NDArray::empty(Shape{}, kInt64);
  out.data<std::int64_t>()[0] = value;
  return out;
}

// The generator's four 64-bit words, stored bit for bit as int64 (there is no uint64 dtype).
NDArray generator_words(const Generator::State& state) {
  NDArray out = NDArray::empty(Shape{4}, kInt64);
  std::memcpy(out.raw_data(), state.data(), sizeof(state));
  return out;
}

// The entries of a checkpoint by name, with lookups that fail with a readable message.
class Contents {
 public:
  Contents(const std::string& path, std::vector<CheckpointEntry> entries)
      : path_(path), entries_(std::move(entries)) {
    for (const CheckpointEntry& entry : entries_) by_name_[entry.name] = &entry.value;
  }
  const std::vector<CheckpointEntry>& entries() const { return entries_; }
  const NDArray* find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
  }
  // A bookkeeping entry that save_checkpoint always writes, with its dtype and shape.
  const NDArray& required(std::string_view name, DType dtype, const Shape& shape) const {
    const NDArray* value = find(name);
    if (value == nullptr)
      fail("checkpoint '{}' lacks {} (entry '{}'): it was not written by save_checkpoint", path_,
           describe_entry(name), name);
    if (value->dtype() != dtype || value->shape() != shape)
      fail("checkpoint '{}' is invalid: {} is {} {}, expected {} {}", path_, describe_entry(name),
           dtype_name(value->dtype()), value->shape(), dtype_name(dtype), shape);
    return *value;
  }

 private:
  const std::string& path_;
  std::vector<CheckpointEntry> entries_;
  std::map<std::string, const NDArray*> by_name_;
};

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

// Checks that the checkpoint's parameters are exactly the model's, with the same shapes
// and dtypes, and returns them in the model's order.
std::vector<const NDArray*> match_parameters(
    const std::string& path, const Contents& contents,
    const std::vector<std::pair<std::string, Tensor>>& parameters) {
  std::vector<std::string> missing, unexpected;
  std::vector<const NDArray*> values;
  std::map<std::string_view, bool> in_model;
  for (const auto& [name, _] : parameters) {
    in_model[name] = true;
    values.push_back(contents.find(std::string(kModelPrefix) + name));
    if (values.back() == nullptr) missing.push_back(name);
  }
  for (const CheckpointEntry& entry : contents.entries()) {
    std::string_view name = entry.name;
    if (name.starts_with(kModelPrefix) && !in_model.contains(name.substr(kModelPrefix.size())))
      unexpected.emplace_back(name.substr(kModelPrefix.size()));
  }
  if (!missing.empty() || !unexpected.empty()) {
    std::string problems;
    if (!missing.empty())
      problems += fmt::format("the model has {} that the checkpoint lacks", quoted_list(missing));
    if (!unexpected.empty())
      problems += fmt::format("{}the checkpoint has {} that the model lacks",
                              problems.empty() ? "" : "; ", quoted_list(unexpected));
    fail("checkpoint '{}' does not match the model: {}", path, problems);
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& [name, parameter] = parameters[i];
    const NDArray& saved = *values[i];
    if (saved.dtype() != parameter.dtype())
      fail("checkpoint '{}': parameter '{}' is {} in the checkpoint but {} in the model", path,
           name, dtype_name(saved.dtype()), dtype_name(parameter.dtype()));
    if (saved.shape() != parameter.shape())
      fail("checkpoint '{}': parameter '{}' has shape {} in the checkpoint but {} in the model",
           path, name, saved.shape(), parameter.shape());
  }
  return values;
}

}  // namespace

void save_checkpoint(const std::string& path, const Module& model,
                     const optim::Optimizer* optimizer, const TrainingState& state) {
  std::vector<CheckpointEntry> entries;
  for (const auto& [name, parameter] : model.named_parameters()) {
    if (!parameter.defined())
      fail("cannot save checkpoint '{}': parameter '{}' is undefined", path, name);
    entries.push_back({std::string(kModelPrefix) + name, parameter.data()});
  }
  if (optimizer != nullptr) {
    for (const auto& [name, value] : optimizer->state())
      entries.push_back({std::string(kOptimizerPrefix) + name, value});
    entries.push_back({std::string(kOptimizerStepsEntry), int64_scalar(optimizer->steps_taken())});
  }
  entries.push_back({std::string(kStepEntry), int64_scalar(state.step)});
  entries.push_back({std::string(kGeneratorEntry), generator_words(state.rng)});
  write_checkpoint_file(path, entries);
}

TrainingState load_checkpoint(const std::string& path, Module& model, optim::Optimizer* optimizer) {
  // Everything is checked first; the model and optimizer change only once all is well.
  const Contents contents(path, read_checkpoint_file(path));
  const auto parameters = model.named_parameters();
  const std::vector<const NDArray*> values = match_parameters(path, contents, parameters);

  TrainingState state;
  state.step = contents.required(kStepEntry, kInt64, Shape{}).data<std::int64_t>()[0];
  std::memcpy(state.rng.data(), contents.required(kGeneratorEntry, kInt64, Shape{4}).raw_data(),
              sizeof(state.rng));

  if (optimizer != nullptr) {
    if (contents.find(kOptimizerStepsEntry) == nullptr)
      fail(
          "checkpoint '{}' has no optimizer state (it was saved without an optimizer); pass "
          "nullptr as the optimizer to load only the model",
          path);
    const std::int64_t steps =
        contents.required(kOptimizerStepsEntry, kInt64, Shape{}).data<std::int64_t>()[0];
    optim::StateDict optimizer_state;
    for (const CheckpointEntry& entry : contents.entries())
      if (entry.name.starts_with(kOptimizerPrefix))
        optimizer_state.emplace_back(entry.name.substr(kOptimizerPrefix.size()), entry.value);
    // The optimizer checks its own entries; its message gets the file's name in front.
    try {
      optimizer->load_state(optimizer_state, steps);
    } catch (const Error& e) {
      fail("checkpoint '{}': {}", path, e.what());
    }
  }

  for (std::size_t i = 0; i < parameters.size(); ++i) {
    NDArray& data = parameters[i].second.data();
    copy_(data, *values[i]);  // in place: every holder of the parameter sees the new values
  }
  return state;
}

}  // namespace attend::nn
