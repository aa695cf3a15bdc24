// Image files and arrays. An image in attend is a float array [C, H, W] with values in
// [0, 1]: C = 1 (grayscale) or 3 (red, green, blue), row 0 at the top. This is the layout
// convolutions and the captioning encoder expect ("channels first"), and [0, 1] floats are
// what a network wants as input, unlike the 0..255 bytes stored in the file.
//
//   NDArray photo = viz::read_image("cat.jpg");            // [3, H, W] float32
//   NDArray small = viz::resize_bilinear(photo, 64, 64);    // [3, 64, 64]
//   viz::write_png("small.png", small);
//
// Reading uses stb_image (PNG, JPEG, BMP, GIF, TGA, PSD, HDR, PIC, PNM); writing makes PNGs
// with stb_image_write. A file that is missing, corrupt, cut short or of an unsupported kind
// gives one attend::Error naming the file and the reason (stb itself would decode a GIF, JPEG,
// BMP or TGA cut short as a picture whose missing part is blank).
#pragma once

#include <filesystem>
#include <string>

#include "tensor/ndarray.h"

namespace attend::viz {

enum class ColorMode {
  kGray,  // 1 channel: colour files are converted to their luminance
  kRgb    // 3 channels: grayscale files are copied into all three
};

// The file as a float32 array [C, H, W] in [0, 1] (C = 1 for kGray, 3 for kRgb). An alpha
// channel in the file is dropped. Pictures larger than 32768 pixels per side or 8192 x 8192
// in all are refused (their header is read first, so a damaged one costs no memory).
NDArray read_image(const std::filesystem::path& path, ColorMode mode = ColorMode::kRgb);

// Writes an image [C, H, W] (C = 1, 3 or 4: gray, RGB, RGBA) or [H, W] (gray) as a PNG.
// Values are clamped to [0, 1] and rounded to the nearest of the 256 levels, so an image
// whose values are multiples of 1/255 reads back exactly. NaN or infinite values are an
// error (they mean a bug upstream, not a colour). Missing folders are created.
void write_png(const std::filesystem::path& path, const NDArray& image);
// The bytes of the PNG file write_png would write (for a data: URI), with the same checks.
std::string encode_png(const NDArray& image);

// Resizes an image [C, H, W] or [H, W] to height x width, each output pixel a weighted
// average of the input pixels near it (so the output stays in the input's value range, and a
// constant image stays constant). Enlarging is bilinear interpolation between the four
// nearest pixel centres; shrinking widens the averaging window to cover every input pixel
// the output pixel spans, so that fine detail is averaged rather than skipped (aliasing).
// The result has the input's float dtype.
NDArray resize_bilinear(const NDArray& image, Index height, Index width);

// Copies an RGB float32 picture tile [3, h, w] into canvas [3, H, W] with its top-left corner at
// column x, row y (the figures' panels and strips). The tile must fit inside the canvas.
void paste(NDArray& canvas, const NDArray& tile, Index x, Index y);

}  // namespace attend::viz
