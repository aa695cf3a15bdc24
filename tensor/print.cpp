#include "tensor/print.h"

#include <cmath>
#include <vector>

namespace attend {
namespace {

class Printer {
 public:
  Printer(const NDArray& x, const PrintOptions& options) : x_(x), options_(options) {
    summarise_ = x.numel() > options.threshold;
    strides_ = contiguous_strides(x.shape());
    choose_number_style();
  }

  std::string run(int indent) {
    std::vector<std::string> numbers;
    collect(0, 0, numbers);
    for (const auto& n : numbers) width_ = std::max(width_, n.size());
    std::string out;
    next_ = 0;
    emit(out, 0, 0, numbers, indent);
    return out;
  }

 private:
  // Positions shown along an axis of size n: all, or the edges around a "..." (-1).
  std::vector<Index> shown(Index n) const {
    std::vector<Index> idx;
    if (!summarise_ || n <= 2 * options_.edge_items) {
      for (Index i = 0; i < n; ++i) idx.push_back(i);
    } else {
      for (Index i = 0; i < options_.edge_items; ++i) idx.push_back(i);
      idx.push_back(-1);
      for (Index i = n - options_.edge_items; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  double value(Index flat) const {
    return dispatch_any(x_.dtype(),
                        [&]<class T>() { return static_cast<double>(x_.data<T>()[flat]); });
  }

  void choose_number_style() {
    if (x_.dtype() == kInt64 || x_.numel() == 0) return;
    double largest = 0, smallest = INFINITY;
    for (Index i = 0; i < x_.numel(); ++i) {
      double v = std::abs(value(i));
      if (!std::isfinite(v)) continue;
      largest = std::max(largest, v);
      if (v > 0) smallest = std::min(smallest, v);
    }
    scientific_ = largest >= 1e6 || smallest < std::pow(10.0, -options_.precision);
  }

  std::string number(Index flat) const {
    double v = value(flat);
    if (x_.dtype() == kInt64) return fmt::format("{}", static_cast<std::int64_t>(v));
    if (scientific_) return fmt::format("{:.{}e}", v, options_.precision);
    return fmt::format("{:.{}f}", v, options_.precision);
  }

  void collect(int axis, Index offset, std::vector<std::string>& numbers) const {
    if (axis == x_.ndim()) {
      numbers.push_back(number(offset));
      return;
    }
    for (Index i : shown(x_.shape()[axis]))
      if (i >= 0) collect(axis + 1, offset + i * strides_[axis], numbers);
  }

  void emit(std::string& out, int axis, Index offset, const std::vector<std::string>& numbers,
            int indent) {
    if (axis == x_.ndim()) {
      const std::string& n = numbers[next_++];
      out += std::string(width_ - n.size(), ' ') + n;
      return;
    }
    out += '[';
    bool first = true;
    for (Index i : shown(x_.shape()[axis])) {
      if (!first) {
        out += ',';
        // A new line between rows of the last axis (more blank lines for higher axes).
        if (axis < x_.ndim() - 1) {
          out += std::string(static_cast<std::size_t>(x_.ndim() - 1 - axis), '\n');
          out += std::string(static_cast<std::size_t>(indent + axis + 1), ' ');
        } else {
          out += ' ';
        }
      }
      first = false;
      if (i < 0)
        out += "...";
      else
        emit(out, axis + 1, offset + i * strides_[axis], numbers, indent);
    }
    out += ']';
  }

  const NDArray& x_;
  PrintOptions options_;
  bool summarise_ = false, scientific_ = false;
  std::array<Index, Shape::kMaxDims> strides_{};
  std::size_t width_ = 0, next_ = 0;
};

}  // namespace

std::string format_values(const NDArray& x, int indent, const PrintOptions& options) {
  check_defined(x, "print");
  return Printer(x, options).run(indent);
}

}  // namespace attend
