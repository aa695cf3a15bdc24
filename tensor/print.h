// Printing arrays through fmt:
//   fmt::print("{}\n", x);   // NDArray([[1.0000, 2.0000], [3.0000, 4.0000]], shape=[2,2],
//   dtype=float32)
// Nested brackets follow the shape, one row of the last axis per line; arrays of more than
// `threshold` elements show only `edge_items` entries at each end of each axis, with "...".
#pragma once

#include <fmt/format.h>

#include <string>

#include "tensor/ndarray.h"

namespace attend {

struct PrintOptions {
  int precision = 4;       // digits after the decimal point
  Index threshold = 1000;  // summarise arrays with more elements than this
  Index edge_items = 3;    // entries kept at each end of a summarised axis
};

// The nested-bracket text of the values, each new line indented by `indent` spaces.
std::string format_values(const NDArray& x, int indent = 0, const PrintOptions& options = {});

}  // namespace attend

template <>
struct fmt::formatter<attend::NDArray> : fmt::formatter<std::string_view> {
  auto format(const attend::NDArray& x, fmt::format_context& ctx) const {
    std::string text =
        x.defined() ? fmt::format("NDArray({}, shape={}, dtype={})", attend::format_values(x, 8),
                                  x.shape(), attend::dtype_name(x.dtype()))
                    : std::string("NDArray(undefined)");
    return fmt::formatter<std::string_view>::format(text, ctx);
  }
};
