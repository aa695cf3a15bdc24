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

// The caption as it fits under a tile `width` pixels wide at `scale`: cut, ending in "..",
// when too long.
std::string fitted_caption(const std::string& word, int width, int scale) {
  std::string caption = printable_ascii(word);
  if (text_width(caption, scale) <= width) return caption;
  while (!caption.empty() && text_width(caption + "..", scale) > width) caption.pop_back();
  return caption + "..";
}

// Fills [x0, x1) x [y0, y1) of canvas [3, H, W] with colour, clipped to the canvas.
void fill_rect(NDArray& canvas, int x0, int y0, int x1, int y1, Rgb colour) {
  const int height = static_cast<int>(canvas.size(1)), width = static_cast<int>(canvas.size(2));
  float* pixels = canvas.data<float>();
  const Index plane = canvas.size(1) * canvas.size(2);
  for (int y = std::max(0, y0); y < std::min(height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(width, x1); ++x) {
      const Index p = static_cast<Index>(y) * width + x;
      pixels[p] = static_cast<float>(colour.r);
      pixels[plane + p] = static_cast<float>(colour.g);
      pixels[2 * plane + p] = static_cast<float>(colour.b);
    }
}

// Frames region `region` of the grid `weights` [h, w] as it lies over tile [3, H, W]: a
// 2-pixel cyan outline (a colour inferno never takes). -1: nothing to mark.
void outline_region(NDArray& tile, const NDArray& weights, Index region, std::string_view op) {
  if (region < 0) return;
  const Index rows = weights.size(0), columns = weights.size(1);
  if (region >= rows * columns)
    fail("{}: marked region {} is outside the {}x{} grid", op, region, rows, columns);
  const Index height = tile.size(1), width = tile.size(2);
  const int x0 = static_cast<int>(region % columns * width / columns);
  const int x1 = static_cast<int>((region % columns + 1) * width / columns);
  const int y0 = static_cast<int>(region / columns * height / rows);
  const int y1 = static_cast<int>((region / columns + 1) * height / rows);
  const Rgb cyan{0, 1, 1};
  constexpr int kLine = 2;
  fill_rect(tile, x0, y0, x1, y0 + kLine, cyan);
  fill_rect(tile, x0, y1 - kLine, x1, y1, cyan);
  fill_rect(tile, x0, y0, x0 + kLine, y1, cyan);
  fill_rect(tile, x1 - kLine, y0, x1, y1, cyan);
}

// One picture of a strip: its tile, the caption under it and (optionally) a value line.
struct StripPanel {
  NDArray tile;
  std::string caption, value;
};

// What the colours mean, printed above the strip.
std::string scale_title(const StripOptions& options) {
  std::string title = options.overlay.normalize
                          ? "colours: each panel scaled to its largest weight (max, under it)"
                          : "colours: the attention weight";
  if (!options.marked_regions.empty()) title += "; box: the region read";
  return title;
}

// Layout: a title line (with the colour scale), the tiles side by side with a gap, each
// caption centred under its tile, as large as the widest caption allows (scale 1 to 3 of the
// 12-pixel font), the value lines, and the colour bar at the right end.
NDArray lay_out_strip(const std::vector<StripPanel>& panels, const StripOptions& options) {
  const int tile_height = static_cast<int>(panels[0].tile.size(1));
  const int tile_width = static_cast<int>(panels[0].tile.size(2));
  const int margin = 4, gap = 4;
  int widest = 1;
  for (const StripPanel& p : panels) widest = std::max(widest, text_width(p.caption, 1));
  const int scale = std::clamp(std::min(tile_width / widest, tile_width / 40), 1, 3);
  const int caption_height = margin + kTextLineHeight * scale;
  const bool values = options.colour_scale && options.overlay.normalize;
  const int title_height = options.colour_scale ? kTextLineHeight + margin : 0;
  const int value_height = values ? kTextLineHeight : 0;
  const std::string high = options.overlay.normalize ? "max" : "1", low = "0";
  const int bar_gap = 8, bar_width = 10;
  const int bar_space =
      options.colour_scale ? bar_gap + bar_width + 3 + std::max(text_width(high, 1), 6) : 0;
  const int count = static_cast<int>(panels.size());
  const std::string title = options.colour_scale ? scale_title(options) : "";
  const Index width = std::max(2 * margin + count * tile_width + (count - 1) * gap + bar_space,
                               2 * margin + text_width(title, 1));
  const Index height = 2 * margin + title_height + tile_height + caption_height + value_height;
  NDArray canvas = NDArray::ones({3, height, width}, kFloat32);  // white
  const int top = margin + title_height;
  for (int i = 0; i < count; ++i) {
    const int x = margin + i * (tile_width + gap);
    paste(canvas, panels[i].tile, x, top);
    const std::string caption = fitted_caption(panels[i].caption, tile_width, scale);
    draw_text(canvas, caption, x + (tile_width - text_width(caption, scale)) / 2,
              top + tile_height + margin, scale, Rgb{0, 0, 0});
    if (values)
      draw_text(canvas, panels[i].value, x + (tile_width - text_width(panels[i].value, 1)) / 2,
                top + tile_height + caption_height, 1, Rgb{0.3, 0.3, 0.3});
  }
  if (options.colour_scale) {
    draw_text(canvas, title, margin, margin, 1, Rgb{0, 0, 0});
    const int bar_x = margin + count * tile_width + (count - 1) * gap + bar_gap;
    draw_colour_bar(canvas, bar_x, top, bar_width, tile_height, low, high,
                    options.overlay.normalize ? "" : "0.5");
  }
  return canvas;
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

void draw_colour_bar(NDArray& canvas, int x, int y, int width, int height,
                     const std::string& low_label, const std::string& high_label,
                     const std::string& middle_label) {
  if (canvas.ndim() != 3 || canvas.size(0) != 3 || canvas.dtype() != kFloat32)
    fail("draw_colour_bar: the canvas must be float32 [3, H, W], not {} {}",
         dtype_name(canvas.dtype()), to_string(canvas.shape()));
  if (width < 1 || height < 2) fail("draw_colour_bar: a {}x{} bar is too small", width, height);
  for (int row = 0; row < height; ++row) {  // the top row is 1, the bottom row 0
    const double value = 1.0 - (row + 0.5) / static_cast<double>(height);
    fill_rect(canvas, x, y + row, x + width, y + row + 1, inferno(value));
  }
  const Rgb black{0, 0, 0};
  fill_rect(canvas, x - 1, y - 1, x + width + 1, y, black);  // the frame
  fill_rect(canvas, x - 1, y + height, x + width + 1, y + height + 1, black);
  fill_rect(canvas, x - 1, y, x, y + height, black);
  fill_rect(canvas, x + width, y, x + width + 1, y + height, black);
  const int text_x = x + width + 3;
  draw_text(canvas, high_label, text_x, y, 1, black);
  if (!middle_label.empty())
    draw_text(canvas, middle_label, text_x, y + (height - kTextLineHeight) / 2, 1, black);
  draw_text(canvas, low_label, text_x, y + height - kTextLineHeight, 1, black);
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
  if (!options.marked_regions.empty() && options.marked_regions.size() != weights.size())
    fail("write_attention_strip: {} marked regions but {} words (one per word, -1 for none)",
         options.marked_regions.size(), weights.size());
  const NDArray rgb = rgb_image(image, op);
  std::vector<StripPanel> panels;
  if (options.show_image) panels.push_back({rgb, "(image)", ""});
  for (std::size_t i = 0; i < weights.size(); ++i) {
    StripPanel panel{blend(rgb, weights[i], options.overlay, op), words[i], ""};
    if (!options.marked_regions.empty())
      outline_region(panel.tile, weights[i], options.marked_regions[i], op);
    if (options.colour_scale && options.overlay.normalize)
      panel.value = fmt::format("max {:.2f}", check_weights(weights[i], op));
    panels.push_back(std::move(panel));
  }
  write_png(png, lay_out_strip(panels, options));

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
}

}  // namespace attend::viz
