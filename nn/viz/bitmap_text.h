// Drawing short text into an image, for the captions under attention overlays. The glyphs
// come from stb_easy_font (public domain, part of libstb-dev): a tiny built-in font made of
// rectangles, so no font file is needed. It knows printable ASCII only; any other character
// (a line break, an accented letter in UTF-8) is drawn as one '?'.
#pragma once

#include <string>
#include <string_view>

#include "nn/viz/colormap.h"
#include "tensor/ndarray.h"

namespace attend::viz {

// Height in pixels of one line of text at scale 1 (glyphs are drawn `scale` times larger).
constexpr int kTextLineHeight = 12;

// The text as the font will draw it: printable ASCII, every other character replaced by '?'.
std::string printable_ascii(std::string_view text);

// Width in pixels of text drawn at scale (1, 2, 3, ...).
int text_width(std::string_view text, int scale);

// Draws text into image [3, H, W] (float32, values in [0, 1]) with its top-left corner at
// pixel (x, y) (column, row). Whatever falls outside the image is clipped.
void draw_text(NDArray& image, std::string_view text, int x, int y, int scale, Rgb color);

}  // namespace attend::viz
