#include "autograd/graphviz.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <vector>

#include "tensor/reduce.h"

namespace attend {
namespace {

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string label(const Node& n) {
  std::string title = n.op.empty() ? "leaf" : n.op;
  if (!n.name.empty()) title = fmt::format("{} {}", title, n.name);
  std::string text = fmt::format("{}\\n{}", escape(title), to_string(n.data.shape()));
  if (n.grad.defined() && is_floating(n.grad.dtype()))
    text += fmt::format("\\n|grad| = {:.4g}", std::sqrt(squared_norm(n.grad)));
  else if (n.grad_norm >= 0)
    text += fmt::format("\\n|grad| = {:.4g}", n.grad_norm);
  return text;
}

}  // namespace

std::string to_dot(const Tensor& root) {
  if (!root.defined()) fail("to_dot: the tensor is undefined");
  std::map<const Node*, int> ids;
  std::vector<const Node*> stack{root.node().get()};
  ids[root.node().get()] = 0;
  std::string nodes, edges;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    const int id = ids[n];
    const char* style = n->op.empty() ? (n->requires_grad ? "lightblue" : "lightgrey") : "white";
    nodes += fmt::format("  n{} [label=\"{}\", fillcolor={}];\n", id, label(*n), style);
    for (const auto& input : n->inputs) {
      auto [it, inserted] = ids.try_emplace(input.get(), static_cast<int>(ids.size()));
      if (inserted) stack.push_back(input.get());
      edges += fmt::format("  n{} -> n{};\n", it->second, id);
    }
  }
  return fmt::format(
      "digraph autograd {{\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", "
      "fontname=\"DejaVu Sans\", fontsize=10];\n{}{}}}\n",
      nodes, edges);
}

void write_dot(const Tensor& root, const std::string& path) {
  std::ofstream file(path);
  if (!file) fail("write_dot: cannot open '{}' for writing", path);
  file << to_dot(root);
  if (!file) fail("write_dot: writing '{}' failed", path);
}

namespace {
// A path inside single quotes for the shell, with each ' written as '\''.
std::string shell_quote(const std::string& path) {
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}
}  // namespace

bool render_dot_to_png(const std::string& dot_path, const std::string& png_path) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) return false;
  std::string command =
      fmt::format("dot -Tpng {} -o {} 2>/dev/null", shell_quote(dot_path), shell_quote(png_path));
  return std::system(command.c_str()) == 0;
}

}  // namespace attend
