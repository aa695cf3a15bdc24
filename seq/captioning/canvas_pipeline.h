// The steps before a canvas captioner's decoder: the region encoder pre-trained (or loaded
// from the encoder cache) and frozen, the canvases made, and every canvas's regions computed
// once. Lessons 09 and 10 share them, and one cached encoder, as the paper reuses one VGG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/flags.h"
#include "nn/data/canvas.h"
#include "nn/data/fashion_mnist.h"
#include "seq/captioning/object_regions.h"
#include "seq/captioning/region_encoder.h"
#include "seq/captioning/region_file.h"

namespace attend::captioning {

// The classes on the canvases: T-shirt/top, Trouser, Sandal, Bag and Ankle boot, whose
// shapes differ even at 18 pixels. Lesson 03's confusion matrix shows why not all ten: the
// shirts, pullovers, coats and dresses are confused with each other even at 28 pixels by a
// well-trained CNN, and one wrong noun spoils a whole caption (--all-classes to see it).
inline const std::vector<Index> kCaptionClasses = {0, 1, 5, 8, 9};

struct CanvasPipelineOptions {
  std::uint64_t seed = 0;
  bool synthetic = false;                        // generated patterns instead of Fashion-MNIST
  std::string data = data::kFashionMnistFolder;  // the Fashion-MNIST folder
  bool all_classes = false;  // all 10 classes on the canvases, not only kCaptionClasses
  Index train = 6000, validation = 300, test = 500;
  PretrainOptions encoder;
  // Held-out single-item canvases that score the encoder (PreparedCanvases::encoder_accuracy);
  // 0: not scored (a lesson that does not print that number saves the 1,000 forward passes).
  Index encoder_singles = 1000;
  // A folder where the pre-trained encoder is kept, one checkpoint per setting (seed, data,
  // steps, learning rate): a later run with the same settings (lesson 10 after lesson 09,
  // as the paper reuses one VGG) loads it instead of pre-training again. Empty: no cache.
  std::string encoder_cache;
  // Also the object regions of every canvas (object_regions.h), from its image and grid
  // regions before the training images are dropped (lesson 14: objects against the grid).
  bool object_regions = false;
  ProposalOptions proposals;
};
struct PreparedCanvases {
  data::CanvasSplits splits;  // the training canvases keep their captions, not their images
  Vocabulary vocab;
  std::vector<std::string> nouns;        // of the classes on the canvases
  std::vector<double> encoder_losses;    // per tenth of the pre-training
  ItemAccuracy encoder_accuracy;         // on held-out single-item canvases
  ItemAccuracy encoder_canvas_accuracy;  // on the objects of the test canvases
  std::string encoder_loaded_from;       // the cached checkpoint used, or empty if pre-trained here
  std::string encoder_cache_error;       // why it could not be cached (a warning), or empty
  RegionFile train_regions;              // [N, L, D + 2], in a file (region_file.h)
  NDArray validation_regions, test_regions;  // [N, L, D + 2] each
  // With options.object_regions: [N, max_regions, D + 4] each, zero-padded.
  ObjectRegions train_objects, validation_objects, test_objects;
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

// The flags of the canvases and of the encoder's pre-training, the same in every captioning
// lesson (09, 10), declared once; a lesson's Options derive from it, giving its own default
// number of training canvases, and add the decoder's flags. The encoder's defaults (and the
// why) are PretrainOptions' (region_encoder.h): a lesson that keeps them finds the encoder
// another lesson cached.
struct CanvasFlags : app::Flags {
  explicit CanvasFlags(Index train_canvases)
      : train(flag(train, "train", train_canvases, "training canvases", app::at_least<Index>(1))) {}

  std::uint64_t seed = flag(seed, "seed", 0, "seed of the canvases, weights, shuffling, samples");
  bool synthetic =
      flag(synthetic, "synthetic", false, "use generated patterns instead of Fashion-MNIST");
  std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
  bool all_classes =
      flag(all_classes, "all-classes", false,
           "put items of all 10 classes on the canvases (default: the 5 of kCaptionClasses)");
  Index train;  // the lesson's default, given to the constructor
  Index validation =
      flag(validation, "validation", 300, "validation canvases", app::at_least<Index>(1));
  Index test = flag(test, "test", 500, "test canvases", app::at_least<Index>(1));
  Index encoder_steps = flag(encoder_steps, "encoder-steps", PretrainOptions{}.steps,
                             "minibatches of the encoder's pre-training", app::at_least<Index>(1));
  double encoder_lr = flag(encoder_lr, "encoder-lr", PretrainOptions{}.lr,
                           "learning rate of the encoder's pre-training", app::above(0.0));
  Index encoder_canvas =
      flag(encoder_canvas, "encoder-canvas", PretrainOptions{}.canvas_size,
           "side of the encoder's pre-training canvases", app::at_least<Index>(8));
  Index encoder_objects =
      flag(encoder_objects, "encoder-objects", PretrainOptions{}.max_objects,
           "items on each pre-training canvas (1 to this)", app::at_least<Index>(1));
  Index encoder_batch = flag(encoder_batch, "encoder-batch", PretrainOptions{}.batch,
                             "canvases per pre-training minibatch", app::at_least<Index>(1));
  Index encoder_singles =
      flag(encoder_singles, "encoder-singles", CanvasPipelineOptions{}.encoder_singles,
           "held-out single-item canvases that score the encoder", app::at_least<Index>(1));
  std::string encoder_cache = flag(
      encoder_cache, "encoder-cache", "output/encoders",
      "folder that keeps pre-trained encoders for later runs and lessons (\"\": pre-train here)");
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");

  // The pipeline these flags describe.
  CanvasPipelineOptions pipeline() const {
    return {.seed = seed,
            .synthetic = synthetic,
            .data = data,
            .all_classes = all_classes,
            .train = train,
            .validation = validation,
            .test = test,
            .encoder = {.steps = encoder_steps,
                        .batch = encoder_batch,
                        .lr = encoder_lr,
                        .canvas_size = encoder_canvas,
                        .max_objects = encoder_objects,
                        .progress = progress},
            .encoder_singles = encoder_singles,
            .encoder_cache = encoder_cache,
            .object_regions = false,
            .proposals = {}};
  }
};

}  // namespace attend::captioning
