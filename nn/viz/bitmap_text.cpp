#include "nn/viz/bitmap_text.h"

#include <stb_easy_font.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/error.h"

namespace attend::viz {
namespace {

// stb_easy_font writes 4 vertices per rectangle, each {float x, y, z; uint8 rgba[4]}.
struct Vertex {
  float x, y, z;
  unsigned char rgba[4];
};
static_assert(sizeof(Vertex) == 16, "stb_easy_font's vertex layout");

}  // namespace

std::string printable_ascii(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    // A UTF-8 character is one lead byte (0xC0 and up) and continuation bytes (0x80..0xBF):
    // one '?' for the lead byte, nothing for the rest, so "saß" becomes "sa?".
    if (byte >= 0x80 && byte < 0xC0) continue;
    // stb_easy_font indexes its glyph table with c - 32: anything outside ' '..'~' would
    // read outside the table, so it is replaced before the font sees it.
    out += (c >= ' ' && c <= '~') ? c : '?';
  }
  return out;
}

int text_width(std::string_view text, int scale) {
  std::string ascii = printable_ascii(text);
  return stb_easy_font_width(ascii.data()) * scale;
}

void draw_text(NDArray& image, std::string_view text, int x, int y, int scale, Rgb color) {
  if (image.ndim() != 3 || image.size(0) != 3 || image.dtype() != kFloat32) {
    fail("draw_text: the image must be float32 [3, H, W], not {} {}", dtype_name(image.dtype()),
         to_string(image.shape()));
  }
  if (scale < 1) fail("draw_text: scale must be at least 1, not {}", scale);
  std::string ascii = printable_ascii(text);
  // About 270 bytes per character, says stb_easy_font; 1000 leaves ample room.
  std::vector<Vertex> vertices(ascii.size() * 1000 / sizeof(Vertex) + 4);
  const int quads = stb_easy_font_print(0, 0, ascii.data(), nullptr, vertices.data(),
                                        static_cast<int>(vertices.size() * sizeof(Vertex)));

  const Index height = image.size(1), width = image.size(2), plane = height * width;
  float* pixels = image.data<float>();
  for (int q = 0; q < quads; ++q) {
    // Each quad is an axis-aligned rectangle: its corners' smallest and largest coordinates.
    const Vertex* v = &vertices[static_cast<std::size_t>(q) * 4];
    float x0 = v[0].x, x1 = v[0].x, y0 = v[0].y, y1 = v[0].y;
    for (int k = 1; k < 4; ++k) {
      x0 = std::min(x0, v[k].x), x1 = std::max(x1, v[k].x);
      y0 = std::min(y0, v[k].y), y1 = std::max(y1, v[k].y);
    }
    const Index left = std::max<Index>(0, x + std::lround(x0 * scale));
    const Index right = std::min<Index>(width, x + std::lround(x1 * scale));
    const Index top = std::max<Index>(0, y + std::lround(y0 * scale));
    const Index bottom = std::min<Index>(height, y + std::lround(y1 * scale));
    for (Index row = top; row < bottom; ++row) {
      for (Index column = left; column < right; ++column) {
        pixels[row * width + column] = static_cast<float>(color.r);
        pixels[plane + row * width + column] = static_cast<float>(color.g);
        pixels[2 * plane + row * width + column] = static_cast<float>(color.b);
      }
    }
  }
}

}  // namespace attend::viz
