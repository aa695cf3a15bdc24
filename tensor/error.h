// attend::Error, the one exception type of the library, and the helpers that build its
// messages. Every misuse (a shape mismatch, an axis out of range, a wrong dtype) throws an
// Error whose message names the operation and the offending shapes or values, so that a
// learner reading it knows which line of their model to look at.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace attend {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// fail("matmul: {} @ {}: inner dimensions {} and {} differ", ...) throws an Error.
// (A function, not assert(): checks must stay in Release builds.)
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace attend
