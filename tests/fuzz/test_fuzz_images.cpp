// Fuzzing read_image (stb_image underneath) with damaged PNG, JPEG, GIF, BMP, TGA and PPM
// files: the header's sizes, cuts at every length (stb alone would return a partly blank
// picture for some of them; read_image must not) and flipped bits.
#include "mutations.h"
#include "nn/viz/image_files.h"
#include "nn/viz/tiny_jpeg.h"
#include "scratch_dir.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;

namespace {

void read_both_ways(const std::string& path) {
  viz::read_image(path, viz::ColorMode::kRgb);
  viz::read_image(path, viz::ColorMode::kGray);
}

// A picture of the palette's colours, as a PNG written by write_png.
std::string png_bytes(const ScratchDir& dir, Index width, Index height) {
  NDArray image = NDArray::zeros({3, height, width});
  float* p = image.data<float>();
  for (Index c = 0; c < 3; ++c)
    for (Index y = 0; y < height; ++y)
      for (Index x = 0; x < width; ++x)
        p[(c * height + y) * width + x] =
            kPalette[static_cast<std::size_t>(colour_index(
                static_cast<int>(x), static_cast<int>(y)))][static_cast<std::size_t>(c)] /
            255.0f;
  viz::write_png(dir.file("valid.png"), image);
  return file_contents(dir.file("valid.png"));
}

}  // namespace

TEST_CASE("fuzz: PNG, JPEG, GIF, BMP, TGA and PPM files", "[fuzz]") {
  ScratchDir dir("fuzz-images");
  std::vector<FuzzTarget> targets;
  // PNG: IHDR's width, height, bit depth and colour type; the length of the chunk after it.
  targets.emplace_back("PNG", dir.file("fuzz.png"), png_bytes(dir, 7, 5));
  targets.back().fields = {{16, 4, Endian::kBig},
                           {20, 4, Endian::kBig},
                           {24, 1, Endian::kBig},
                           {25, 1, Endian::kBig},
                           {33, 4, Endian::kBig}};
  // JPEG: the frame header's height, width and component count.
  const std::string jpeg = tiny_jpeg_bytes();
  const std::size_t sof = jpeg.find("\xff\xc0");
  REQUIRE(sof != std::string::npos);
  targets.emplace_back("JPEG", dir.file("fuzz.jpg"), jpeg);
  targets.back().fields = {
      {sof + 5, 2, Endian::kBig}, {sof + 7, 2, Endian::kBig}, {sof + 9, 1, Endian::kBig}};
  // GIF: the screen's size and flags, then the image's position, size, flags, code size and
  // first block length.
  targets.emplace_back("GIF", dir.file("fuzz.gif"), gif_file(7, 5));
  for (std::size_t offset : {6, 8, 26, 28, 30, 32})
    targets.back().fields.push_back({offset, 2, Endian::kLittle});
  for (std::size_t offset : {10, 34, 35, 36})
    targets.back().fields.push_back({offset, 1, Endian::kLittle});
  // BMP: file size, pixel offset, header size, width, height, planes, bits, compression,
  // colours used.
  targets.emplace_back("BMP", dir.file("fuzz.bmp"), bmp_file(7, 5));
  targets.back().fields = {
      {2, 4, Endian::kLittle},  {10, 4, Endian::kLittle}, {14, 4, Endian::kLittle},
      {18, 4, Endian::kLittle}, {22, 4, Endian::kLittle}, {26, 2, Endian::kLittle},
      {28, 2, Endian::kLittle}, {30, 4, Endian::kLittle}, {46, 4, Endian::kLittle}};
  // TGA: type, width, height, bits per pixel, descriptor.
  targets.emplace_back("TGA", dir.file("fuzz.tga"), tga_file(7, 5));
  targets.back().fields = {{2, 1, Endian::kLittle},
                           {12, 2, Endian::kLittle},
                           {14, 2, Endian::kLittle},
                           {16, 1, Endian::kLittle},
                           {17, 1, Endian::kLittle}};
  // PPM: width, height and maximum value, written as text.
  targets.emplace_back("PPM", dir.file("fuzz.ppm"), ppm_file(7, 5));
  targets.back().text_fields = {{3, 1}, {5, 1}, {7, 3}};

  for (const FuzzTarget& t : targets) check_promise(fuzz_reader(t, read_both_ways), t.name);
}
