// Attention over an image, as in Show, Attend and Tell (Xu et al., 2015): while generating
// each word, the captioning model weighs a grid of image regions (e.g. 8x8 feature-map
// cells over a 64x64 image). To see where it looked, the grid is upsampled (bilinear) to the
// image size, coloured with the inferno map (colormap.h) and blended over the image:
//
//   pixel = (1 - alpha) * image + alpha * inferno(weight / largest weight)
//
// so unattended regions darken and attended ones glow yellow. These are drawn here, pixel
// by pixel, and written with stb_image_write: no gnuplot needed.
//
//   viz::write_attention_strip("out/caption.png", image, alphas, {"a", "cat", "sits"});
//
// writes one PNG with the image followed by one overlay per word, each word printed under
// its picture in a small built-in bitmap font (bitmap_text.h; ASCII only, other characters
// show as '?'), and out/caption.txt with the words (exactly as given) and their grids.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::viz {

struct OverlayOptions {
  double alpha = 0.6;  // how strongly the colour covers the image, 0..1
  // Divide the weights by their largest value first, so the most attended region is always
  // the brightest (weights over 64 cells are all small). Off: weights are used as they are,
  // clamped to [0, 1].
  bool normalize = true;
};

// image [C, H, W] (C = 1 or 3) or [H, W], values in [0, 1]; weights [h, w] (any sizes,
// non-negative). Returns the blended picture, float32 [3, H, W].
NDArray attention_overlay(const NDArray& image, const NDArray& weights,
                          const OverlayOptions& options = {});

// The overlay written as a PNG, and its weights grid to the .txt file beside it.
void write_attention_overlay(const std::filesystem::path& png, const NDArray& image,
                             const NDArray& weights, const OverlayOptions& options = {});

struct StripOptions {
  OverlayOptions overlay;
  bool show_image = true;  // put the plain image first, captioned "(image)"
  // The colour scale: a colour bar at the right end with its values, and a title line above
  // the strip saying what the colours mean. When each panel is scaled by its own largest
  // weight (overlay.normalize), the bar runs from 0 to "max" and each panel prints its
  // largest weight under its word.
  bool colour_scale = true;
  // Per word: a region of its grid to outline (row-major index into the grid, as the models
  // flatten it), or -1 for none; e.g. the region hard attention read. Empty: no outlines.
  std::vector<Index> marked_regions;
};

// One PNG: the overlays for weights[0], weights[1], ... side by side, words[i] printed under
// overlay i (one word per grid), and a .txt file with each word and its grid. No grids (an
// empty caption) is allowed when the plain image is shown.
void write_attention_strip(const std::filesystem::path& png, const NDArray& image,
                           const std::vector<NDArray>& weights,
                           const std::vector<std::string>& words, const StripOptions& options = {});

// Draws a vertical colour bar into canvas [3, H, W] (float32): the inferno map from 0 at the
// bottom to 1 at the top in a box `width` x `height` with its top-left corner at (x, y), a
// black frame, and the labels of its ends (and middle, if given) printed to its right.
void draw_colour_bar(NDArray& canvas, int x, int y, int width, int height,
                     const std::string& low_label, const std::string& high_label,
                     const std::string& middle_label = "");

}  // namespace attend::viz
