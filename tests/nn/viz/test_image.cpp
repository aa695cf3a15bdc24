#include <zlib.h>

#include <cmath>
#include <cstdint>

#include "image_files.h"
#include "nn/viz/image.h"
#include "scratch.h"
#include "support.h"
#include "tiny_jpeg.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// An image [channels, height, width] whose values are all multiples of 1/255 (so a PNG
// stores them exactly), varied enough that a swapped channel or row would show.
NDArray test_pattern(Index channels, Index height, Index width) {
  std::vector<float> values;
  for (Index i = 0; i < channels * height * width; ++i) {
    values.push_back(static_cast<float>((i * 37 + 11) % 256) / 255.0f);
  }
  return NDArray::from_vector(std::span<const float>(values), Shape{channels, height, width});
}

}  // namespace

TEST_CASE("viz: a PNG written and read back has the same pixels", "[viz]") {
  ScratchFolder dir("png-round-trip");
  SECTION("RGB") {
    NDArray image = test_pattern(3, 5, 7);
    viz::write_png(dir / "rgb.png", image);
    NDArray back = viz::read_image(dir / "rgb.png", viz::ColorMode::kRgb);
    CHECK(back.dtype() == kFloat32);
    check_close(back, image, 0.0);
  }
  SECTION("gray, written from [H, W] and read as [1, H, W]") {
    NDArray image = test_pattern(1, 6, 4);
    viz::write_png(dir / "gray.png", image.reshape({6, 4}));
    check_close(viz::read_image(dir / "gray.png", viz::ColorMode::kGray), image, 0.0);
    // Asked for RGB, a gray file gives its gray value in all three channels.
    NDArray rgb = viz::read_image(dir / "gray.png", viz::ColorMode::kRgb);
    REQUIRE(rgb.shape() == Shape{3, 6, 4});
    for (Index c = 0; c < 3; ++c) CHECK(rgb.at({c, 2, 3}) == image.at({0, 2, 3}));
  }
  SECTION("values outside [0, 1] are clamped, float64 is accepted") {
    NDArray image = f64({-0.5, 0, 1, 7}, {1, 2, 2});
    viz::write_png(dir / "clamped.png", image);
    CHECK(viz::read_image(dir / "clamped.png", viz::ColorMode::kGray).to_vector() ==
          std::vector<double>{0, 0, 1, 1});
  }
  SECTION("a JPEG (lossy: close to its colour)") {
    write_bytes(dir / "tiny.jpg", tiny_jpeg_bytes());
    NDArray jpeg = viz::read_image(dir / "tiny.jpg");
    REQUIRE(jpeg.shape() == Shape{3, 8, 8});
    const double colour[3] = {200, 100, 50};
    for (Index c = 0; c < 3; ++c) {
      for (Index p = 0; p < 64; ++p) {
        CHECK_THAT(jpeg.at({c, p / 8, p % 8}) * 255, Catch::Matchers::WithinAbs(colour[c], 2));
      }
    }
  }
  SECTION("missing folders are created") {
    viz::write_png(dir / "a/b/c.png", test_pattern(3, 2, 2));
    CHECK(std::filesystem::exists(dir / "a/b/c.png"));
  }
}

namespace {

// The PNG's image data (its IDAT chunks, joined), inflated: per row a filter byte, then the row.
std::string png_rows(const std::string& file) {
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(file.at(at + i));
    return v;
  };
  std::string deflated;
  for (std::size_t at = 8; at + 12 <= file.size();) {  // chunks: length, type, data, CRC
    const std::uint32_t length = be32(at);
    if (file.compare(at + 4, 4, "IDAT") == 0) deflated += file.substr(at + 8, length);
    at += 12 + length;
  }
  std::string rows(1 << 22, '\0');
  uLongf size = rows.size();
  REQUIRE(uncompress(reinterpret_cast<Bytef*>(rows.data()), &size,
                     reinterpret_cast<const Bytef*>(deflated.data()), deflated.size()) == Z_OK);
  rows.resize(size);
  return rows;
}

}  // namespace

TEST_CASE("viz: a large PNG round-trips through zlib, every row Paeth-filtered", "[viz]") {
  // nn/viz/stb_impl.cpp has zlib compress stb's PNGs and fixes the row filter (it made lesson
  // 09's strips about 5x faster to write); the file must still be a PNG any reader takes.
  ScratchFolder dir("png-zlib");
  const Index height = 300, width = 500;
  NDArray image = test_pattern(3, height, width);
  viz::write_png(dir / "large.png", image);
  check_close(viz::read_image(dir / "large.png", viz::ColorMode::kRgb), image, 0.0);
  const std::string file = read_text(dir / "large.png");
  // The image data starts with its zlib header: 78 01 from zlib at level 1 (stb's own: 78 5e).
  const std::size_t idat = file.find("IDAT");
  REQUIRE(idat != std::string::npos);
  CHECK(static_cast<unsigned char>(file.at(idat + 4)) == 0x78);
  CHECK(static_cast<unsigned char>(file.at(idat + 5)) == 0x01);
  const std::string rows = png_rows(file);
  REQUIRE(rows.size() == static_cast<std::size_t>(height * (1 + 3 * width)));
  Index paeth_rows = 0;
  for (Index y = 0; y < height; ++y)
    paeth_rows += rows[static_cast<std::size_t>(y * (1 + 3 * width))] == 4;
  CHECK(paeth_rows == height);
}

TEST_CASE("viz: read_image gives one clear error for missing, corrupt or unsupported files",
          "[viz]") {
  ScratchFolder dir("read-errors");
  SECTION("missing file") {
    std::string message = error_message([&] { viz::read_image(dir / "nowhere.png"); });
    CHECK_THAT(message, Contains("read_image: cannot open"));
    CHECK_THAT(message, Contains("nowhere.png"));
    CHECK_THAT(message, Contains("No such file or directory"));
  }
  SECTION("random bytes") {
    std::string noise;
    for (int i = 0; i < 500; ++i) noise += static_cast<char>((i * 7919 + 13) % 251);
    write_bytes(dir / "noise.png", noise);
    std::string message = error_message([&] { viz::read_image(dir / "noise.png"); });
    CHECK_THAT(message, Contains("read_image: cannot decode"));
    CHECK_THAT(message, Contains("noise.png"));
    CHECK_THAT(message, Contains("unknown image type"));
  }
  SECTION("a truncated PNG") {
    viz::write_png(dir / "whole.png", test_pattern(3, 32, 32));
    std::string bytes = read_text(dir / "whole.png");
    write_bytes(dir / "half.png", bytes.substr(0, bytes.size() / 2));
    std::string message = error_message([&] { viz::read_image(dir / "half.png"); });
    CHECK_THAT(message, Contains("read_image: cannot decode"));
    CHECK_THAT(message, Contains("half.png"));
    CHECK_THAT(message, Contains("outofdata (the data ends too early: is the file truncated?)"));
  }
  SECTION("an unsupported format (WebP) and a text file") {
    write_bytes(dir / "photo.webp",
                std::string("RIFF\x24\0\0\0WEBPVP8 ", 16) + std::string(40, 'x'));
    std::string message = error_message([&] { viz::read_image(dir / "photo.webp"); });
    CHECK_THAT(message, Contains("photo.webp"));
    CHECK_THAT(message, Contains("unknown image type"));
    CHECK_THAT(message, Contains("PNG, JPEG"));  // says what it can read
    write_bytes(dir / "notes.txt", "these are not pixels\n");
    CHECK_THAT(error_message([&] { viz::read_image(dir / "notes.txt"); }),
               Contains("unknown image type"));
  }
  SECTION("an empty file and a folder") {
    write_bytes(dir / "empty.png", "");
    CHECK_THAT(error_message([&] { viz::read_image(dir / "empty.png"); }),
               Contains("cannot decode"));
    CHECK_THAT(error_message([&] { viz::read_image(dir.path()); }), Contains("is a folder"));
  }
}

TEST_CASE("viz: GIF, BMP, TGA and PPM files written byte by byte read as their pixels", "[viz]") {
  ScratchFolder dir("formats");
  const std::pair<std::string, std::string> files[] = {{"p.gif", gif_file(7, 5)},
                                                       {"p.bmp", bmp_file(7, 5)},
                                                       {"p.tga", tga_file(7, 5)},
                                                       {"p.ppm", ppm_file(7, 5)}};
  for (const auto& [name, bytes] : files) {
    INFO(name);
    write_bytes(dir / name, bytes);
    NDArray image = viz::read_image(dir / name);
    REQUIRE(image.shape() == Shape{3, 5, 7});
    for (Index c = 0; c < 3; ++c)
      for (Index y = 0; y < 5; ++y)
        for (Index x = 0; x < 7; ++x)
          CHECK(std::lround(image.at({c, y, x}) * 255) ==
                kPalette[static_cast<std::size_t>(colour_index(
                    static_cast<int>(x), static_cast<int>(y)))][static_cast<std::size_t>(c)]);
  }
}

// stb_image reads the bytes after the end of the data as zeros: on its own it decodes a GIF
// cut after its header as a black picture, and a BMP, TGA or JPEG cut in the pixels as a
// picture with a black end. read_image notices that stb asked for more bytes than the file has.
TEST_CASE("viz: a picture cut short is an error naming the file, in every format", "[viz]") {
  ScratchFolder dir("cut");
  viz::write_png(dir / "whole.png", test_pattern(3, 5, 7));
  const std::string gif = gif_file(7, 5);
  const std::pair<std::string, std::string> files[] = {{"cut.gif", gif},
                                                       {"cut.bmp", bmp_file(7, 5)},
                                                       {"cut.tga", tga_file(7, 5)},
                                                       {"cut.ppm", ppm_file(7, 5)},
                                                       {"cut.jpg", tiny_jpeg_bytes()},
                                                       {"cut.png", read_text(dir / "whole.png")}};
  for (const auto& [name, bytes] : files) {
    // Cut after 3/4 of the file, after half of it, and 2 bytes before its end.
    for (std::size_t keep : {bytes.size() * 3 / 4, bytes.size() / 2, bytes.size() - 2}) {
      INFO(name << " cut to " << keep << " of " << bytes.size() << " bytes");
      write_bytes(dir / name, bytes.substr(0, keep));
      const std::string message = error_message([&] { viz::read_image(dir / name); });
      CHECK_THAT(message, Contains(name));
      CHECK_THAT(message, Contains("truncated"));
    }
  }
  // The example of issue 15: a GIF cut right after its header and colour table.
  write_bytes(dir / "header.gif", gif.substr(0, 6 + 7 + 12));
  CHECK_THAT(error_message([&] { viz::read_image(dir / "header.gif"); }),
             Contains("header.gif") && Contains("truncated"));
  // A header announcing a picture too large to hold is refused before any pixel is read.
  std::string huge = gif;
  huge[6] = huge[8] = '\xff';
  huge[7] = huge[9] = '\x7f';  // 32767 x 32767
  write_bytes(dir / "huge.gif", huge);
  CHECK_THAT(error_message([&] { viz::read_image(dir / "huge.gif"); }),
             Contains("huge.gif' is 32767x32767 pixels"));
}

TEST_CASE("viz: a PNM header number too long for an int is refused before stb reads it", "[viz]") {
  ScratchFolder dir("pnm");
  // stb_image 2.27 would overflow an int reading 2147483648 (found by tests/fuzz under UBSan).
  write_bytes(dir / "wide.ppm", "P6\n# a comment 12345678901\n2147483648 5\n255\n");
  CHECK_THAT(error_message([&] { viz::read_image(dir / "wide.ppm"); }),
             Contains("wide.ppm") && Contains("more than 9 digits"));
  // Nine digits and a comment with long numbers in it are left to stb (which says the file is
  // too large or too short).
  write_bytes(dir / "nine.ppm", "P6 # 1234567890123\n999999999 5 255\n");
  CHECK_THAT(error_message([&] { viz::read_image(dir / "nine.ppm"); }),
             Contains("nine.ppm") && !Contains("more than 9 digits"));
  write_bytes(dir / "fine.ppm", ppm_file(7, 5));
  CHECK(viz::read_image(dir / "fine.ppm").size(2) == 7);
}

TEST_CASE("viz: write_png rejects what cannot be a PNG", "[viz]") {
  ScratchFolder dir("write-errors");
  CHECK_THAT(error_message([&] {
               viz::write_png(dir / "x.png", NDArray::zeros({5, 2, 2}));
             }),
             Contains("has 5 channels"));
  CHECK_THAT(error_message([&] { viz::write_png(dir / "x.png", NDArray::zeros({4})); }),
             Contains("[C, H, W] or [H, W]"));
  CHECK_THAT(error_message([&] {
               viz::write_png(dir / "x.png", NDArray::zeros({3, 0, 2}));
             }),
             Contains("is empty"));
  CHECK_THAT(error_message([&] {
               viz::write_png(dir / "x.png", NDArray::zeros({2, 2}, kInt64));
             }),
             Contains("float32 or float64"));
  NDArray with_nan = NDArray::zeros({2, 3});
  with_nan.set({1, 2}, std::nan(""));
  CHECK_THAT(error_message([&] { viz::write_png(dir / "x.png", with_nan); }),
             Contains("non-finite value (nan) at channel 0, row 1, column 2"));
  CHECK_FALSE(std::filesystem::exists(dir / "x.png"));
  // A folder that cannot be created: its parent is a regular file.
  write_bytes(dir / "file", "x");
  CHECK_THAT(error_message([&] {
               viz::write_png(dir / "file/x.png", NDArray::zeros({2, 2}));
             }),
             Contains("cannot create the folder"));
}

TEST_CASE("viz: resize keeps a constant image constant and a gradient monotone", "[viz]") {
  SECTION("constant, enlarged and shrunk") {
    NDArray constant = NDArray::full({3, 5, 7}, 0.3, kFloat64);
    check_close(viz::resize_bilinear(constant, 13, 17), NDArray::full({3, 13, 17}, 0.3, kFloat64),
                1e-15);
    check_close(viz::resize_bilinear(constant, 2, 3), NDArray::full({3, 2, 3}, 0.3, kFloat64),
                1e-15);
  }
  SECTION("a horizontal gradient stays monotone along x and constant along y") {
    NDArray ramp = NDArray::empty({9, 6}, kFloat64);
    for (Index y = 0; y < 9; ++y) {
      for (Index x = 0; x < 6; ++x) ramp.set({y, x}, static_cast<double>(x * x) / 25.0);
    }
    for (auto [h, w] : {std::pair<Index, Index>{20, 31}, {4, 4}, {9, 3}}) {
      NDArray r = viz::resize_bilinear(ramp, h, w);
      REQUIRE(r.shape() == Shape{h, w});
      for (Index y = 0; y < h; ++y) {
        for (Index x = 1; x < w; ++x) CHECK(r.at({y, x}) >= r.at({y, x - 1}));
        CHECK_THAT(r.at({y, 0}), Catch::Matchers::WithinAbs(r.at({0, 0}), 1e-15));
      }
      CHECK(r.at({0, w - 1}) > r.at({0, 0}));
      CHECK(r.at({0, 0}) >= 0.0);  // never outside the input's range
      CHECK(r.at({0, w - 1}) <= 1.0);
    }
  }
  SECTION("enlarging interpolates between pixel centres; the same size changes nothing") {
    check_close(viz::resize_bilinear(f64({0, 1}, {1, 2}), 1, 4), f64({0, 0.25, 0.75, 1}, {1, 4}));
    NDArray image = test_pattern(3, 4, 5);
    check_close(viz::resize_bilinear(image, 4, 5), image, 0.0);
  }
  SECTION("shrinking averages: a one-pixel line does not vanish") {
    NDArray line = NDArray::zeros({1, 16}, kFloat64);
    line.set({0, 7}, 1);
    // Sampling only at the 4 output centres (input columns 1.5, 5.5, 9.5, 13.5) would miss it.
    NDArray small = viz::resize_bilinear(line, 1, 4);
    CHECK(small.at({0, 1}) > 0.1);
    CHECK(small.at({0, 3}) == 0);
  }
  SECTION("bad sizes") {
    CHECK_THAT(error_message([] {
                 viz::resize_bilinear(NDArray::zeros({2, 2}), 0, 3);
               }),
               Contains("resize_bilinear: the new size 0x3 must be between 1 and"));
    CHECK_THAT(error_message([] {
                 viz::resize_bilinear(NDArray::zeros({2, 2, 2, 2}), 4, 4);
               }),
               Contains("[C, H, W] or [H, W]"));
  }
}
