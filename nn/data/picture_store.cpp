#include "nn/data/picture_store.h"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

#include "nn/data/fashion_mnist.h"
#include "tensor/error.h"

namespace attend::data {
namespace {

// fashion_mnist_pixel(k) for every byte k: what a stored byte turns back into.
const std::array<float, 256>& pixel_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int k = 0; k < 256; ++k) t[static_cast<std::size_t>(k)] = fashion_mnist_pixel(k);
    return t;
  }();
  return table;
}

// The bytes of the pictures if every pixel is, bit for bit, the float of one (a -0.0, a value
// between two of them or outside [0, 1], a NaN: not); none otherwise.
std::shared_ptr<const std::vector<std::uint8_t>> as_bytes(const float* pixels, std::size_t n) {
  const std::array<float, 256>& table = pixel_table();
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(n);
  std::uint8_t* out = bytes->data();
  for (std::size_t i = 0; i < n; ++i) {
    const float v = pixels[i];
    if (!(v >= 0.0f && v <= 1.0f)) return nullptr;
    const auto k = static_cast<std::uint8_t>(v * 255.0f + 0.5f);  // the nearest byte
    if (std::bit_cast<std::uint32_t>(table[k]) != std::bit_cast<std::uint32_t>(v)) return nullptr;
    out[i] = k;
  }
  return bytes;
}

}  // namespace

PictureStore::PictureStore(const NDArray& images) {
  if (images.ndim() != 4 || images.dtype() != kFloat32)
    fail("PictureStore: pictures must be float32 [N, C, H, W], got {} {}",
         dtype_name(images.dtype()), images.shape());
  count_ = images.size(0);
  picture_shape_ = Shape{images.size(1), images.size(2), images.size(3)};
  bytes_ = as_bytes(images.data<float>(), static_cast<std::size_t>(images.numel()));
  if (!bytes_) floats_ = images;
}

std::size_t PictureStore::nbytes() const {
  return packed() ? bytes_->size() : floats_.nbytes();
}

NDArray PictureStore::picture(Index i) const {
  if (i < 0 || i >= count_) fail("PictureStore::picture: no picture {} ({} pictures)", i, count_);
  NDArray out = NDArray::empty(picture_shape_);
  const std::size_t n = static_cast<std::size_t>(picture_shape_.numel());
  float* o = out.data<float>();
  if (packed()) {
    const std::array<float, 256>& table = pixel_table();
    const std::uint8_t* b = bytes_->data() + static_cast<std::size_t>(i) * n;
    for (std::size_t j = 0; j < n; ++j) o[j] = table[b[j]];
  } else {
    const float* f = floats_.data<float>() + static_cast<std::size_t>(i) * n;
    std::copy_n(f, n, o);
  }
  return out;
}

}  // namespace attend::data
