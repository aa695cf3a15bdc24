#include "nn/viz/colormap.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace attend::viz {
namespace {

// Inferno sampled at 0, 0.1, ..., 1.0, as 0xRRGGBB.
constexpr std::array<std::uint32_t, 11> kInferno = {
    0x000004, 0x160b39, 0x420a68, 0x6a176e, 0x932667, 0xbc3754,
    0xdd513a, 0xf37819, 0xfca50a, 0xf6d746, 0xfcffa4,
};

Rgb unpack(std::uint32_t hex) {
  return {static_cast<double>((hex >> 16) & 0xff) / 255.0,
          static_cast<double>((hex >> 8) & 0xff) / 255.0, static_cast<double>(hex & 0xff) / 255.0};
}

}  // namespace

Rgb inferno(double value) {
  if (std::isnan(value)) value = 0;
  const double position = std::clamp(value, 0.0, 1.0) * static_cast<double>(kInferno.size() - 1);
  const std::size_t below = std::min(static_cast<std::size_t>(position), kInferno.size() - 2);
  const double t = position - static_cast<double>(below);  // 0 at `below`, 1 at the next point
  const Rgb a = unpack(kInferno[below]), b = unpack(kInferno[below + 1]);
  return {a.r + t * (b.r - a.r), a.g + t * (b.g - a.g), a.b + t * (b.b - a.b)};
}

std::string gnuplot_palette() {
  std::string command = "set palette defined (";
  for (std::size_t i = 0; i < kInferno.size(); ++i) {
    command += fmt::format("{}{} '#{:06x}'", i == 0 ? "" : ", ", i, kInferno[i]);
  }
  return command + ")\n";
}

}  // namespace attend::viz
