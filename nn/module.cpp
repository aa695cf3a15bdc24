#include "nn/module.h"

#include <fmt/format.h>

#include <set>

namespace attend::nn {

Tensor& Module::register_parameter(const std::string& name, Tensor& value) {
  if (!value.defined()) fail("register_parameter: '{}' is undefined", name);
  for (const auto& [existing, _] : parameters_)
    if (existing == name) fail("register_parameter: '{}' is registered twice", name);
  value.requires_grad_(true);
  parameters_.emplace_back(name, &value);
  return value;
}

Module& Module::register_module(const std::string& name, Module& child) {
  for (const auto& [existing, _] : children_)
    if (existing == name) fail("register_module: '{}' is registered twice", name);
  if (&child == this) fail("register_module: a module cannot be its own child");
  children_.emplace_back(name, &child);
  return child;
}

void Module::collect(const std::string& prefix,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, tensor] : parameters_) out.emplace_back(prefix + name, *tensor);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> all, out;
  collect("", all);
  std::set<const Node*> seen;  // shared tensors: the first name wins
  for (auto& [name, p] : all)
    if (seen.insert(p.node().get()).second) out.emplace_back(std::move(name), std::move(p));
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, p] : named_parameters()) out.push_back(p);
  return out;
}

Index Module::parameter_count() const {
  Index n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (Tensor& p : parameters()) p.zero_grad();
}

void Module::to(DType dtype) {
  if (!is_floating(dtype))
    fail("Module::to: parameters must be float32 or float64, not {}", dtype_name(dtype));
  for (Tensor& p : parameters()) {
    p.data() = p.data().to(dtype);
    p.zero_grad();
  }
}

void Module::summarise(const std::string& name, int depth, std::string& out) const {
  std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  Index own = 0;
  for (const auto& [_, p] : parameters_) own += p->numel();
  out += fmt::format("{}{}{}{}\n", indent, name.empty() ? "" : name + ": ", describe(),
                     own > 0 ? fmt::format("  [{} parameters]", own) : "");
  for (const auto& [pname, p] : parameters_)
    out += fmt::format("{}  .{} {}\n", indent, pname, to_string(p->shape()));
  for (const auto& [cname, child] : children_) child->summarise(cname, depth + 1, out);
}

std::string Module::summary() const {
  std::string out;
  summarise("", 0, out);
  out += fmt::format("total: {} parameters\n", parameter_count());
  return out;
}

}  // namespace attend::nn
