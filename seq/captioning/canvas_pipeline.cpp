// The steps before the decoder, shared by lessons 09 and 10: pre-train the encoder on
// canvases like the captioned ones (every cell says what is at its centre) and freeze it,
// then make the canvases and compute every canvas's regions (the training canvases a chunk
// at a time, their images dropped once encoded).
#include "seq/captioning/canvas_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <span>

#include "app/clock.h"
#include "nn/data/fashion_mnist.h"
#include "nn/data/synthetic_images.h"
#include "nn/io/checkpoint.h"
#include "tensor/allocator.h"

namespace attend::captioning {

namespace {
constexpr Index kSingleItemCanvas = 32;     // their side
constexpr std::uint64_t kEncoderSeed = 31;  // offset of the pre-training generator's seed
constexpr std::size_t kTrainChunk = 256;    // training canvases made, encoded, then dropped
constexpr std::size_t kEncodeBatch = 64;    // encode_all's batch (region_encoder.cpp)

// The items of the canvases: Fashion-MNIST's training and test pictures, or the generated
// stand-in for them.
std::pair<data::LabelledImages, data::LabelledImages> load_items(
    const CanvasPipelineOptions& options) {
  data::LabelledImages train_items, held_out_items;
  if (options.synthetic) {
    train_items = data::synthetic_fashion_mnist(data::Split::kTrain, 6000, options.seed);
    held_out_items = data::synthetic_fashion_mnist(data::Split::kTest, 1000, options.seed);
  } else {
    if (!data::fashion_mnist_available(data::Split::kTrain, options.data) ||
        !data::fashion_mnist_available(data::Split::kTest, options.data))
      fail(
          "Fashion-MNIST is not in {} (apt-get install dataset-fashion-mnist), or run with "
          "--synthetic",
          options.data);
    train_items = data::load_fashion_mnist(data::Split::kTrain, options.data);
    held_out_items = data::load_fashion_mnist(data::Split::kTest, options.data);
  }
  if (static_cast<Index>(train_items.class_names.size()) != kClasses)
    fail("prepare_canvases: expected {} item classes, got {}", kClasses,
         train_items.class_names.size());
  return {std::move(train_items), std::move(held_out_items)};
}

// Appends a chunk's object regions to those of the `total` training canvases.
void append_objects(ObjectRegions& all, const ObjectRegions& chunk, Index total) {
  const Index done = static_cast<Index>(all.boxes.size());
  if (!all.regions.defined())
    all.regions = NDArray::empty({total, chunk.regions.size(1), chunk.regions.size(2)});
  std::copy_n(chunk.regions.data<float>(), chunk.regions.numel(),
              all.regions.data<float>() + done * chunk.regions.size(1) * chunk.regions.size(2));
  all.boxes.insert(all.boxes.end(), chunk.boxes.begin(), chunk.boxes.end());
  all.real_regions += chunk.real_regions;
}

// Saves the pre-trained encoder for later runs. A failure (a full disk, a folder that cannot
// be made) costs the next run its shortcut, not this run its minutes of pre-training: a
// warning, and the run goes on. Returns the reason, or "" when saved.
std::string save_to_cache(const std::string& folder, const std::string& file,
                          const RegionEncoder& encoder) {
  try {
    std::filesystem::create_directories(folder);
    nn::save_checkpoint(file, encoder);
    return "";
  } catch (const std::exception& e) {  // attend::Error, or std::filesystem's filesystem_error
    fmt::print(stderr,
               "warning: cannot save the pre-trained encoder for later runs ({}); going on\n",
               e.what());
    return e.what();
  }
}

}  // namespace

std::string encoder_cache_file(const CanvasPipelineOptions& o) {
  // Everything the pre-trained weights depend on is in the name (the float32 sums also
  // depend on the number of threads, in the last bits only).
  return fmt::format("{}/encoder_seed{}_{}_{}_canvas{}_objects{}_steps{}_batch{}_lr{}.ckpt",
                     o.encoder_cache, o.seed, o.synthetic ? "synthetic" : "fashion",
                     o.all_classes ? "10classes" : "5classes", o.encoder.canvas_size,
                     o.encoder.max_objects, o.encoder.steps, o.encoder.batch, o.encoder.lr);
}

namespace {

// Encodes `canvases`, the training canvases after the first `encoded`, into p.train_regions
// (and p.train_objects).
void encode_training(PreparedCanvases& p, const CanvasPipelineOptions& options,
                     RegionEncoder& encoder, std::span<const CanvasExample> canvases,
                     Index& encoded) {
  NDArray regions = encode_all(encoder, canvases);
  const Index train = options.train;
  if (p.train_regions.size() == 0)
    p.train_regions = RegionFile(train, regions.size(1), regions.size(2));
  p.train_regions.write(encoded, regions);
  if (options.object_regions)
    append_objects(p.train_objects, object_regions(regions, canvases, options.proposals), train);
  encoded += regions.size(0);
}

// Encodes a chunk of training canvases, then drops their images. A last chunk may end with a
// smaller batch (lesson 10: 6,000 = 23 x 256 + 64 + 48), whose arrays have new sizes: the full
// batches' cached blocks (about 100 MB) go back to the system before it, so that the two sets
// are never held together, with the training pictures (lesson 10's peak).
void encode_chunk(PreparedCanvases& p, const CanvasPipelineOptions& options, RegionEncoder& encoder,
                  std::span<CanvasExample> chunk, Index& encoded) {
  const std::size_t full = chunk.size() / kEncodeBatch * kEncodeBatch;
  if (full > 0) encode_training(p, options, encoder, chunk.first(full), encoded);
  if (full < chunk.size()) {
    if (encoded > 0) memory::empty_cache();
    encode_training(p, options, encoder, chunk.subspan(full), encoded);
  }
  for (CanvasExample& c : chunk) c.image = NDArray();
}

// prepare_canvases but for the start clock, and the cache emptied after it.
void prepare_into(PreparedCanvases& p, const CanvasPipelineOptions& options,
                  RegionEncoder& encoder) {
  auto [train_items, held_out_items] = load_items(options);
  data::CanvasOptions canvas_options;
  canvas_options.size = kCanvasSize;
  if (!options.all_classes) canvas_options.classes = kCaptionClasses;
  // The generators keep Fashion-MNIST's pictures as bytes (nn/data/picture_store.h): their
  // float32 arrays (220 MB) go back to the system now.
  std::optional<data::CanvasGenerator> train_gen(std::in_place, std::move(train_items),
                                                 canvas_options);
  data::CanvasGenerator held_out_gen(std::move(held_out_items), canvas_options);
  memory::empty_cache();
  p.vocab = caption_vocabulary(*train_gen);
  p.nouns = train_gen->distinct_nouns();
  // Pre-training on canvases drawn from the training pictures (or loading the weights an
  // earlier run with the same settings saved); scored on held-out ones either way.
  const std::string cached = options.encoder_cache.empty() ? "" : encoder_cache_file(options);
  if (!cached.empty() && std::filesystem::exists(cached)) {
    try {
      nn::load_checkpoint(cached, encoder);
      p.encoder_loaded_from = cached;
    } catch (const Error& e) {  // from an encoder of another shape, or damaged: train anew
      fmt::print(stderr, "note: cannot use the cached encoder ({}); pre-training it again\n",
                 e.what());
    }
  }
  if (p.encoder_loaded_from.empty()) {
    Generator pretrain_gen(options.seed + kEncoderSeed);
    p.encoder_losses =
        pretrain_encoder(encoder,
                         pretraining_canvases(*train_gen, options.encoder.canvas_size,
                                              canvas_options.classes, options.encoder.max_objects),
                         options.encoder, pretrain_gen);
    if (!cached.empty())
      p.encoder_cache_error = save_to_cache(options.encoder_cache, cached, encoder);
  }
  // The canvases. The training ones are encoded a chunk at a time as they are made, their
  // regions written to a file (region_file.h) and their images dropped at once (the decoder
  // reads only the frozen regions): 24,000 images at once would take 1.2 GB, their regions
  // 405 MB.
  const Index train = options.train;
  Index encoded = 0;
  auto encode_and_drop = [&](std::span<CanvasExample> chunk) {
    encode_chunk(p, options, encoder, chunk, encoded);
  };
  p.splits = data::make_canvas_splits(*train_gen, held_out_gen, static_cast<std::size_t>(train),
                                      static_cast<std::size_t>(options.validation),
                                      static_cast<std::size_t>(options.test), options.seed,
                                      encode_and_drop, kTrainChunk);
  // The training pictures (47 MB as bytes) are not needed any more: what follows uses
  // held-out ones.
  train_gen.reset();
  memory::empty_cache();
  if (options.encoder_singles > 0) {
    data::CanvasGenerator held_out_singles =
        pretraining_canvases(held_out_gen, kSingleItemCanvas, canvas_options.classes, 1);
    Generator single_gen(options.seed + 2);
    std::vector<CanvasExample> singles;
    for (Index i = 0; i < options.encoder_singles; ++i)
      singles.push_back(held_out_singles.make(single_gen));
    p.encoder_accuracy = item_accuracy(encoder, singles);
  }
  // And on the test canvases themselves: every object, from the cells inside its box.
  p.encoder_canvas_accuracy = item_accuracy(encoder, p.splits.test);
  p.validation_regions = encode_all(encoder, p.splits.validation);
  p.test_regions = encode_all(encoder, p.splits.test);
  if (options.object_regions) {
    p.validation_objects =
        object_regions(p.validation_regions, p.splits.validation, options.proposals);
    p.test_objects = object_regions(p.test_regions, p.splits.test, options.proposals);
  }
}

}  // namespace

PreparedCanvases prepare_canvases(const CanvasPipelineOptions& options, RegionEncoder& encoder) {
  const auto start = std::chrono::steady_clock::now();
  PreparedCanvases p;
  prepare_into(p, options, encoder);
  // Fashion-MNIST's test pictures (as bytes) are freed now, and the pre-training's and the
  // encoding's batches. The allocator would keep their blocks for reuse (tensor/allocator.h),
  // but the decoder's arrays have other sizes: they go back to the system.
  memory::empty_cache();
  p.seconds = app::seconds_since(start);
  return p;
}

}  // namespace attend::captioning
