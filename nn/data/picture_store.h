// The source pictures of a canvas generator (nn/data/canvas.h), kept as small as their values
// allow. Fashion-MNIST's pixels are bytes k, which load_fashion_mnist turns into the float32
// k / 255 (fashion_mnist_pixel): its 60,000 training pictures take 188 MB as floats and 47 MB
// as the bytes. A PictureStore keeps the bytes when every pixel is exactly the float that
// fashion_mnist_pixel makes of one, and gives a picture back as those floats, bit for bit, when
// it is asked for it (a canvas pastes 1 to 3 of them); pictures with any other value (the
// generated stand-in's) are kept as they are. Copies share the pictures.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::data {

class PictureStore {
 public:
  PictureStore() = default;
  // images: float32 [N, 1, H, W]. Shares the array when it is not packed.
  explicit PictureStore(const NDArray& images);

  Index size() const { return count_; }
  const Shape& picture_shape() const { return picture_shape_; }  // [1, H, W]
  bool packed() const { return bytes_ != nullptr; }              // kept as bytes
  std::size_t nbytes() const;                                    // the memory the pictures take

  // Picture i as float32 [1, H, W]: the same values, bit for bit, as images[i].
  NDArray picture(Index i) const;

 private:
  Index count_ = 0;
  Shape picture_shape_;
  NDArray floats_;                                          // when not packed
  std::shared_ptr<const std::vector<std::uint8_t>> bytes_;  // when packed: k per pixel
};

}  // namespace attend::data
