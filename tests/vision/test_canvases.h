// What the tests of vision/ share: canvases made by hand, and a tiny encoder.
#pragma once

#include <utility>
#include <vector>

#include "attend.h"

namespace attend::testing {

// A tiny encoder (2, 3, 4 channels) for fast tests; 16x16 images give a 2x2 grid.
constexpr vision::EncoderShape kTinyEncoder{
    .in_channels = 3, .channels1 = 2, .channels2 = 3, .channels3 = 4};

inline data::CanvasObject canvas_object(Index label, data::Box box) {
  data::CanvasObject o;
  o.label = label;
  o.box = box;
  return o;
}

// A black canvas of `size` pixels with the given objects on it (only their labels and boxes).
inline data::CanvasExample canvas_example(std::vector<data::CanvasObject> objects, Index size = 8) {
  data::CanvasExample e;
  e.image = NDArray::zeros({3, size, size});
  e.objects = std::move(objects);
  return e;
}

}  // namespace attend::testing
