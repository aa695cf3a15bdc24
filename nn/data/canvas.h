// "Canvas captions": the image-captioning data of the Show, Attend and Tell lessons, built
// so that the right answer is known.
//
// A canvas (64x64 RGB by default) holds 1 to 3 real Fashion-MNIST items (or the generated
// stand-in), each scaled, tinted and placed at a random position without overlap, and its
// exact bounding box is recorded. The caption comes from a small grammar that names the
// objects in spatial order, so a model must look at the right object to say the right word:
//
//   "a red bag"                           one object
//   "a green coat left of a blue dress"   two objects, side by side (named left to right)
//   "a red boot above a green sneaker above a blue bag"   (named top to bottom)
//
// For every caption word the generator records which object it describes (-1 for "a",
// "left", "of", "above"), so that a lesson can measure whether the attention for the word
// "bag" lies inside the bag's box.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nn/data/fashion_mnist.h"
#include "nn/data/picture_store.h"
#include "tensor/random.h"

namespace attend::data {

// A pixel rectangle [x0, x1) x [y0, y1): the tight box of an object's drawn pixels.
struct Box {
  Index x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool contains(double x, double y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
  double center_x() const { return 0.5 * static_cast<double>(x0 + x1); }
  double center_y() const { return 0.5 * static_cast<double>(y0 + y1); }
};

struct CanvasObject {
  Index label = 0;  // class of the item
  Index noun = 0;   // its noun: an index into CanvasGenerator::distinct_nouns()
  int color = 0;    // index into canvas_colors()
  Box box;
};

struct CanvasExample {
  NDArray image;                      // float32 [3, size, size] in [0, 1]
  std::vector<CanvasObject> objects;  // in the order the caption names them
  std::vector<std::string> words;     // the caption, without <bos>/<eos>
  std::vector<int> word_object;       // per word: the object it describes, or -1
  // The background cue (CanvasCue below): whether it was painted, and where. The caption
  // never mentions it.
  bool has_cue = false;
  Box cue_box;  // the band's pixels; empty (all 0) without a cue
};

// A background cue for shortcut learning (lesson 14, "the boat classifier that looks at the
// water"): a tinted band across the canvas, in the free space beside the items, painted with
// probability p_with on canvases that hold an item of class `label` and p_without on the
// others. With p_with = 0.95 and p_without small, the band predicts the class almost as well
// as the item does, and is much easier to see. nn/data/canvas_cue.h makes the test sets
// where it is aligned with the class or conflicts with it.
struct CanvasCue {
  Index label = -1;         // the class the cue goes with; -1: no cue (the default)
  double p_with = 0.95;     // P(cue | an item of class `label` is on the canvas)
  double p_without = 0.02;  // P(cue | none is)
  Index thickness = 6;      // the band's width in pixels
  std::array<float, 3> color = {0.25f, 0.45f, 0.85f};  // its RGB ("water")
};

struct CanvasOptions {
  Index size = 64;  // canvas side in pixels
  int min_objects = 1, max_objects = 3;
  Index min_item_size = 18, max_item_size = 26;  // side of a scaled 28x28 item
  bool colors = true;                            // tint items and say the colour in the caption
  // The classes whose items appear on canvases (empty: all). Lessons 09-10 use five whose
  // shapes differ even at 18 pixels, so that a small CNN can name every item.
  std::vector<Index> classes = {};
  // Off by default: canvases without a cue are the same, pixel for pixel and draw for draw,
  // as before the cue existed.
  CanvasCue cue = {};
};

// "red", "green", "blue", "yellow": the tints and their words.
const std::vector<std::string>& canvas_colors();

// One caption noun per class: Fashion-MNIST's names made single lower-case words
// ("t-shirt", "trouser", ..., "boot"), or the generated patterns' names with dashes.
std::vector<std::string> caption_nouns(const std::vector<std::string>& class_names);

class CanvasGenerator {
 public:
  // items: the 28x28 source pictures and their labels (from load_fashion_mnist or
  // synthetic_fashion_mnist). Fashion-MNIST's are kept as their bytes (picture_store.h: a
  // quarter of the memory), turned back into the same floats when pasted.
  CanvasGenerator(LabelledImages items, CanvasOptions options = {});
  // The pictures of `source`, shared (not copied), drawn with other options.
  CanvasGenerator(const CanvasGenerator& source, CanvasOptions options);
  CanvasExample make(Generator& gen) const;
  const CanvasOptions& options() const { return options_; }
  // Per class: its noun (also for classes that options().classes leaves out).
  const std::vector<std::string>& nouns() const { return nouns_; }
  // The nouns of the classes that appear, in the order of options().classes.
  const std::vector<std::string>& distinct_nouns() const { return distinct_nouns_; }
  // The index in distinct_nouns() of class `label`'s noun, or -1 if it never appears.
  Index noun_of_class(Index label) const;
  // Every word a caption can contain, in a fixed order (for a vocabulary).
  std::vector<std::string> caption_words() const;

 private:
  void choose_items();  // the classes' nouns and the items that may be drawn
  void check_layout() const;

  PictureStore pictures_;
  NDArray labels_;  // int64 [N]: the pictures' classes
  CanvasOptions options_;
  std::vector<std::string> nouns_;
  std::vector<std::string> distinct_nouns_;
  std::vector<Index> noun_of_class_;  // per class: its index in distinct_nouns_, or -1
  std::vector<Index> usable_items_;   // indices of the items of the classes that appear
};

struct CanvasSplits {
  std::vector<CanvasExample> train, validation, test;
};
// Fixed-seed splits. Training canvases are drawn by `train_items` (made from the training
// pictures); validation and test canvases by `held_out_items` (made from pictures the model
// never trains on, e.g. Fashion-MNIST's test split), so that held-out scores measure
// generalisation to new objects, not memory.
//
// `train_chunks`, if given, is called with each run of `chunk_size` training canvases (the
// last may be shorter) as soon as it is made: a caller that needs the images only once (to
// encode them) can use them there and drop them, so that the images of all the training
// canvases never exist at once. The canvases are the same with or without it.
using CanvasChunkVisitor = std::function<void(std::span<CanvasExample>)>;
CanvasSplits make_canvas_splits(const CanvasGenerator& train_items,
                                const CanvasGenerator& held_out_items, std::size_t train,
                                std::size_t validation, std::size_t test, std::uint64_t seed,
                                const CanvasChunkVisitor& train_chunks = {},
                                std::size_t chunk_size = 1024);

// The caption's grammar as a sentence: "a red coat left of a blue dress".
std::string caption_text(const CanvasExample& example);

}  // namespace attend::data
