// Drawing the graph behind a tensor in Graphviz's DOT language. Each tensor is a box
// showing its op (or "leaf" and its name), its shape and, when known, the L2 norm of its
// gradient: leaves and retain_grad() tensors after backward(), and every node when
// backward() ran under DetectAnomalyGuard. Arrows point from inputs to the op that uses
// them, in the direction of the forward computation.
#pragma once

#include <string>

#include "autograd/tensor.h"

namespace attend {

std::string to_dot(const Tensor& root);
// Writes to_dot(root) to `path`; throws an Error if the file cannot be written.
void write_dot(const Tensor& root, const std::string& path);
// Runs Graphviz (`dot -Tpng`) on a DOT file. Returns false, with nothing written, when
// Graphviz is not installed or fails; the DOT file is still there to look at.
bool render_dot_to_png(const std::string& dot_path, const std::string& png_path);

}  // namespace attend
