// The steps before a canvas captioner's decoder: the region encoder pre-trained (or loaded
// from the encoder cache) and frozen, the canvases made, and every canvas's regions computed
// once. Lessons 09 and 10 share them, and one cached encoder, as the paper reuses one VGG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/data/canvas.h"
#include "seq/captioning/region_encoder.h"

namespace attend::captioning {

// The classes on the canvases: T-shirt/top, Trouser, Sandal, Bag and Ankle boot, whose
// shapes differ even at 18 pixels. Lesson 03's confusion matrix shows why not all ten: the
// shirts, pullovers, coats and dresses are confused with each other even at 28 pixels by a
// well-trained CNN, and one wrong noun spoils a whole caption (--all-classes to see it).
inline const std::vector<Index> kCaptionClasses = {0, 1, 5, 8, 9};

struct CanvasPipelineOptions {
  std::uint64_t seed = 0;
  bool synthetic = false;    // generated patterns instead of Fashion-MNIST
  bool all_classes = false;  // all 10 classes on the canvases, not only kCaptionClasses
  Index train = 6000, validation = 300, test = 500;
  PretrainOptions encoder;
  // A folder where the pre-trained encoder is kept, one checkpoint per setting (seed, data,
  // steps, learning rate): a later run with the same settings (lesson 10 after lesson 09,
  // as the paper reuses one VGG) loads it instead of pre-training again. Empty: no cache.
  std::string encoder_cache;
};
struct PreparedCanvases {
  data::CanvasSplits splits;  // the training canvases keep their captions, not their images
  Vocabulary vocab;
  std::vector<std::string> nouns;        // of the classes on the canvases
  std::vector<double> encoder_losses;    // per tenth of the pre-training
  ItemAccuracy encoder_accuracy;         // on held-out single-item canvases
  ItemAccuracy encoder_canvas_accuracy;  // on the objects of the test canvases
  std::string encoder_loaded_from;       // the cached checkpoint used, or empty if pre-trained here
  NDArray train_regions, validation_regions, test_regions;  // [N, L, D + 2] each
  double seconds = 0;
};
// The encoder pre-trained (or loaded) and frozen; the canvases (training ones from the
// training items, held-out ones from the test items) and every canvas's regions. The training
// canvases keep their captions but not their images, dropped as soon as they are encoded.
// The encoder's pre-training draws from its own generator (seeded from options.seed), so a
// run that loads a cached encoder makes the same canvases and decoders as one that trains it.
PreparedCanvases prepare_canvases(const CanvasPipelineOptions& options, RegionEncoder& encoder);
// The cache file of these settings inside options.encoder_cache.
std::string encoder_cache_file(const CanvasPipelineOptions& options);

}  // namespace attend::captioning
