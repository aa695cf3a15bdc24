// PictureStore (nn/data/picture_store.h): Fashion-MNIST's pictures kept as bytes give back the
// same floats, bit for bit, and the same canvases; any other picture is kept as floats.
#include <cmath>

#include "nn/data/canvas.h"
#include "nn/data/synthetic_images.h"
#include "support.h"
#include "tensor/shape_ops.h"

using namespace attend;
using namespace attend::data;
using namespace attend::testing;

namespace {

// n pictures [n, 1, 28, 28] whose pixels are Fashion-MNIST's floats of the bytes (i + 7r + c).
NDArray byte_pictures(Index n) {
  NDArray images = NDArray::empty({n, 1, 28, 28});
  float* p = images.data<float>();
  for (Index i = 0; i < n; ++i)
    for (Index r = 0; r < 28; ++r)
      for (Index c = 0; c < 28; ++c)
        p[(i * 28 + r) * 28 + c] = fashion_mnist_pixel(static_cast<int>((i + 7 * r + c) % 256));
  return images;
}

}  // namespace

TEST_CASE("picture store: bytes for Fashion-MNIST's values, the same floats back", "[nn]") {
  const NDArray images = byte_pictures(40);
  const PictureStore store(images);
  CHECK(store.packed());
  CHECK(store.size() == 40);
  CHECK(store.nbytes() == 40 * 28 * 28);
  // Every byte, 0 to 255, is in them (i + 7r + c reaches 39 + 189 + 27).
  for (Index i = 0; i < 40; ++i)
    REQUIRE(same_bits(store.picture(i), slice(images, 0, i, i + 1).reshape({1, 28, 28})));
  CHECK(fashion_mnist_pixel(0) == 0.0f);
  CHECK(fashion_mnist_pixel(255) == 1.0f);
}

TEST_CASE("picture store: other values are kept as floats", "[nn]") {
  const LabelledImages shapes = synthetic_fashion_mnist(Split::kTrain, 30, 1);
  const PictureStore store(shapes.images);
  CHECK_FALSE(store.packed());
  CHECK(store.nbytes() == shapes.images.nbytes());
  REQUIRE(same_bits(store.picture(29), slice(shapes.images, 0, 29, 30).reshape({1, 28, 28})));
  for (float odd : {-0.0f, std::nextafter(fashion_mnist_pixel(3), 1.0f), 1.5f, -0.25f}) {
    NDArray images = byte_pictures(3);
    images.data<float>()[100] = odd;
    CHECK_FALSE(PictureStore(images).packed());
  }
  CHECK_THROWS(PictureStore(NDArray::zeros({3, 28, 28})));
}

TEST_CASE("canvases are the same from pictures kept as bytes or as floats", "[nn]") {
  LabelledImages items;
  items.images = byte_pictures(60);
  items.labels = NDArray::empty({60}, kInt64);
  for (Index i = 0; i < 60; ++i) items.labels.data<std::int64_t>()[i] = i % 10;
  items.class_names = fashion_mnist_class_names();
  LabelledImages floats = items;
  floats.images = items.images.clone();
  floats.images.data<float>()[0] = -0.0f;  // pixel 0 is 0: the same canvases, not packable
  const CanvasGenerator bytes(items), kept(floats);
  const CanvasGenerator shared(bytes, CanvasOptions{});  // the same pictures, shared
  Generator g1(3), g2(3), g3(3);
  for (int n = 0; n < 50; ++n) {
    const CanvasExample a = bytes.make(g1), b = kept.make(g2), c = shared.make(g3);
    REQUIRE(a.image.to_vector() == b.image.to_vector());
    REQUIRE(same_bits(a.image, c.image));
    REQUIRE(a.words == b.words);
    REQUIRE(a.objects.size() == b.objects.size());
    for (std::size_t i = 0; i < a.objects.size(); ++i) {
      CHECK(a.objects[i].box.x0 == b.objects[i].box.x0);
      CHECK(a.objects[i].box.y1 == b.objects[i].box.y1);
    }
  }
}
