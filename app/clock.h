// Wall-clock time of a piece of work, for progress lines and reports.
//
//   auto start = std::chrono::steady_clock::now();
//   ...
//   double seconds = app::seconds_since(start);
#pragma once

#include <chrono>

namespace attend::app {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace attend::app
