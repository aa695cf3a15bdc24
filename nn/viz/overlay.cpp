#include "nn/viz/overlay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nn/viz/bitmap_text.h"
#include "nn/viz/colormap.h"
#include "nn/viz/image.h"
#include "nn/viz/output_file.h"
#include "tensor/error.h"

namespace attend::viz {
namespace {

// The image as float32 RGB [3, H, W]: grayscale copied to all three channels.
NDArray rgb_image(const NDArray& image, std::string_view op) {
  check_defined(image, op, "image");
  const bool shape_ok =
      (image.ndim() == 2 || (image.ndim() == 3 && (image.size(0) == 1 || image.size(0) == 3))) &&
      image.numel() > 0;
  if (!is_floating(image.dtype()) || !shape_ok) {
    fail("{}: the image must be a non-empty float [1 or 3, H, W] or [H, W], not {} {}", op,
         dtype_name(image.dtype()), to_string(image.shape()));
  }
  const Index channels = image.ndim() == 3 ? image.size(0) : 1;
  const Index height = image.size(-2), width = image.size(-1), plane = height * width;
  const std::vector<double> in = image.to_vector();
  NDArray rgb = NDArray::empty({3, height, width}, kFloat32);
  float* out = rgb.data<float>();
  for (Index c = 0; c < 3; ++c) {
    const Index source = channels == 3 ? c : 0;
    for (Index p = 0; p < plane; ++p) {
      const double v = in[source * plane + p];
      if (!std::isfinite(v)) fail("{}: the image has a non-finite value ({})", op, v);
      out[c * plane + p] = static_cast<float>(std::clamp(v, 0.0, 1.0));
    }
  }
  return rgb;
}

// Checks an attention grid: 2-D, non-empty, finite, non-negative. Returns its largest value.
double check_weights(const NDArray& weights, std::string_view op) {
  check_defined(weights, op, "weights");
  if (weights.ndim() != 2 || weights.numel() == 0 || !is_floating(weights.dtype())) {
    fail("{}: the attention weights must be a non-empty float grid [h, w], not {} {}", op,
         dtype_name(weights.dtype()), to_string(weights.shape()));
  }
  double largest = 0;
  for (double v : weights.to_vector()) {
    if (!std::isfinite(v) || v < 0) {
      fail("{}: attention weights must be finite and non-negative, found {}", op, v);
    }
    largest = std::max(largest, v);
  }
  return largest;
}

NDArray blend(const NDArray& rgb, const NDArray& weights, const OverlayOptions& options,
              std::string_view op) {
  if (!(options.alpha >= 0 && options.alpha <= 1)) {
    fail("{}: alpha must be between 0 and 1, not {}", op, options.alpha);
  }
  const double largest = check_weights(weights, op);
  const Index height = rgb.size(1), width = rgb.size(2), plane = height * width;
  // Bilinear upsampling spreads each cell's weight smoothly over its pixel box, peaking at
  // the box's centre. Every upsampled value is an average of grid values, so none exceeds
  // `largest` and scaling by 1 / largest keeps them within [0, 1].
  const NDArray upsampled = resize_bilinear(weights.to(kFloat64), height, width);
  const double scale = options.normalize && largest > 0 ? 1.0 / largest : 1.0;
  std::span<const double> w = upsampled.span<double>();
  NDArray out = rgb.clone();
  float* pixels = out.data<float>();
  const double a = options.alpha;
  for (Index p = 0; p < plane; ++p) {
    const Rgb colour = inferno(std::clamp(w[p] * scale, 0.0, 1.0));
    pixels[p] = static_cast<float>((1 - a) * pixels[p] + a * colour.r);
    pixels[plane + p] = static_cast<float>((1 - a) * pixels[plane + p] + a * colour.g);
    pixels[2 * plane + p] = static_cast<float>((1 - a) * pixels[2 * plane + p] + a * colour.b);
  }
  return out;
}

void write_grid(std::ofstream& out, const NDArray& weights) {
  const std::vector<double> v = weights.to_vector();
  const Index columns = weights.size(1);
  for (std::size_t i = 0; i < v.size(); ++i) {
    out << number_text(v[i], weights.dtype() == kFloat32)
        << ((static_cast<Index>(i) + 1) % columns == 0 ? "\n" : " ");
  }
}

// Copies tile [3, h, w] into canvas [3, H, W] with its top-left corner at (x, y).
void paste(NDArray& canvas, const NDArray& tile, Index x, Index y) {
  const Index height = canvas.size(1), width = canvas.size(2);
  const Index tile_height = tile.size(1), tile_width = tile.size(2);
  float* dst = canvas.data<float>();
  const float* src = tile.data<float>();
  for (Index c = 0; c < 3; ++c) {
    for (Index row = 0; row < tile_height; ++row) {
      std::copy_n(src + (c * tile_height + row) * tile_width, tile_width,
                  dst + (c * height + y + row) * width + x);
    }
  }
}

// The caption as it fits under a tile `width` pixels wide at `scale`: cut, ending in "..",
// when too long.
std::string fitted_caption(const std::string& word, int width, int scale) {
  std::string caption = printable_ascii(word);
  if (text_width(caption, scale) <= width) return caption;
  while (!caption.empty() && text_width(caption + "..", scale) > width) caption.pop_back();
  return caption + "..";
}

}  // namespace

NDArray attention_overlay(const NDArray& image, const NDArray& weights,
                          const OverlayOptions& options) {
  return blend(rgb_image(image, "attention_overlay"), weights, options, "attention_overlay");
}

void write_attention_overlay(const std::filesystem::path& png, const NDArray& image,
                             const NDArray& weights, const OverlayOptions& options) {
  const std::string_view op = "write_attention_overlay";
  check_png_path(png, op);
  const NDArray picture = blend(rgb_image(image, op), weights, options, op);
  const std::filesystem::path data = data_path_for(png);
  std::ofstream out = open_for_writing(data, op);
  out << "# attend attention overlay: " << png.filename().string() << "\n"
      << "# attention grid " << weights.size(0) << " x " << weights.size(1) << " over an image "
      << picture.size(1) << " x " << picture.size(2) << "; shown "
      << (options.normalize ? "scaled by 1 / (largest weight)" : "as is") << "\n";
  write_grid(out, weights);
  finish_writing(out, data, op);
  write_png(png, picture);
}

void write_attention_strip(const std::filesystem::path& png, const NDArray& image,
                           const std::vector<NDArray>& weights,
                           const std::vector<std::string>& words, const StripOptions& options) {
  const std::string_view op = "write_attention_strip";
  check_png_path(png, op);
  // An empty caption (a model that says <eos> at once) still gets its picture.
  if (weights.empty() && !options.show_image)
    fail("write_attention_strip: '{}': no attention grids and no image to show", png.string());
  if (weights.size() != words.size()) {
    fail("write_attention_strip: {} attention grids but {} words (one grid per word)",
         weights.size(), words.size());
  }
  const NDArray rgb = rgb_image(image, op);
  std::vector<NDArray> tiles;
  std::vector<std::string> captions;
  if (options.show_image) {
    tiles.push_back(rgb);
    captions.push_back("(image)");
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    tiles.push_back(blend(rgb, weights[i], options.overlay, op));
    captions.push_back(words[i]);
  }

  // Layout: tiles side by side with a gap, each caption centred under its tile, as large as
  // the widest caption allows (scale 1 to 3 of the 12-pixel font).
  const int tile_height = static_cast<int>(rgb.size(1)), tile_width = static_cast<int>(rgb.size(2));
  const int margin = 4, gap = 4;
  int widest = 1;
  for (const std::string& c : captions) widest = std::max(widest, text_width(c, 1));
  const int scale = std::clamp(std::min(tile_width / widest, tile_width / 40), 1, 3);
  const int caption_height = margin + kTextLineHeight * scale;
  const int count = static_cast<int>(tiles.size());
  const Index width = 2 * margin + count * tile_width + (count - 1) * gap;
  const Index height = 2 * margin + tile_height + caption_height;
  NDArray canvas = NDArray::ones({3, height, width}, kFloat32);  // white
  for (int i = 0; i < count; ++i) {
    const int x = margin + i * (tile_width + gap);
    paste(canvas, tiles[i], x, margin);
    const std::string caption = fitted_caption(captions[i], tile_width, scale);
    draw_text(canvas, caption, x + (tile_width - text_width(caption, scale)) / 2,
              margin + tile_height + margin, scale, Rgb{0, 0, 0});
  }

  const std::filesystem::path data = data_path_for(png);
  std::ofstream out = open_for_writing(data, op);
  out << "# attend attention strip: " << png.filename().string() << "\n"
      << "# image " << rgb.size(1) << " x " << rgb.size(2) << "; " << words.size()
      << " words, one block each (separated by two blank lines): \"# word i: <word>\" and its "
         "attention grid, shown "
      << (options.overlay.normalize ? "scaled by 1 / (largest weight)" : "as is") << "\n";
  for (std::size_t i = 0; i < words.size(); ++i) {
    out << (i == 0 ? "" : "\n\n") << "# word " << i << ": " << one_line(words[i]) << "\n";
    write_grid(out, weights[i]);
  }
  finish_writing(out, data, op);
  write_png(png, canvas);
}

}  // namespace attend::viz
