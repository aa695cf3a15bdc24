// A generated stand-in for Fashion-MNIST: 28x28 grey pictures of 10 kinds of simple
// patterns (stripes, rings, crosses, ...), with the same shapes and dtypes as
// load_fashion_mnist returns. Tests use it so that they never need a download, and every
// lesson accepts --synthetic to run without the real data.
//
// Each picture draws its pattern at a random position (up to 2 pixels off centre), size and
// brightness, then adds noise, so that a model has to learn the pattern, not memorise
// pixels; a small MLP or a linear classifier reaches high accuracy in a few hundred steps.
// The labels are balanced (the counts of two classes differ by at most one) and shuffled.
// Everything comes from one Generator seeded by (seed, split): the same call gives the same
// pictures on every machine, and the test split differs from the training split.
#pragma once

#include <cstdint>

#include "nn/data/fashion_mnist.h"

namespace attend::data {

// "horizontal stripes", "vertical stripes", "diagonal stripes", "checkerboard", "ring",
// "disc", "plus", "frame", "cross", "triangle": the names of labels 0 to 9.
const std::vector<std::string>& synthetic_class_names();

// `count` pictures (0: as many as Fashion-MNIST's split, 60,000 or 10,000).
LabelledImages synthetic_fashion_mnist(Split split, Index count = 0, std::uint64_t seed = 0);

// One picture of class `label` (0..9), drawn into out[28 * 28]; what the function above
// calls for each item.
void draw_synthetic_image(Index label, Generator& gen, float* out);

}  // namespace attend::data
