// Small image files of the formats read_image reads, written byte by byte (stb_image_write makes
// only PNG, BMP, TGA and JPEG, and attend writes only PNG). Each holds a width x height
// picture whose pixel (x, y) has colour number (x + 2 y) % 4 of kPalette: the image tests
// check the decoded pixels, the truncation tests and the fuzz test (tests/fuzz) cut and damage
// the bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace attend::testing {

inline constexpr std::array<std::array<unsigned char, 3>, 4> kPalette = {
    {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {40, 80, 200}}};

inline int colour_index(int x, int y) {
  return (x + 2 * y) % 4;
}

inline void put_le(std::string& out, std::uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// GIF89a with a global table of the 4 colours and LZW codes of 3 bits: a clear code before
// every second pixel keeps the code table from growing, so no compression is needed to make a
// valid stream (GIF spec, appendix F).
inline std::string gif_file(int width, int height) {
  std::string out = "GIF89a";
  put_le(out, static_cast<std::uint32_t>(width), 2);
  put_le(out, static_cast<std::uint32_t>(height), 2);
  out += "\x81";  // a global colour table of 2^(1+1) entries
  out += std::string("\0\0", 2);
  for (const auto& colour : kPalette) out.append(colour.begin(), colour.end());
  out += ",";  // image descriptor 0x2C: position (0, 0), the full size, no local table
  put_le(out, 0, 4);
  put_le(out, static_cast<std::uint32_t>(width), 2);
  put_le(out, static_cast<std::uint32_t>(height), 2);
  out += std::string("\0\2", 2);  // flags, then the LZW minimum code size 2: clear 4, end 5
  std::string data;
  std::uint32_t bits = 0;
  int nbits = 0;
  const auto code = [&](std::uint32_t c) {  // 3 bits, least significant first
    bits |= c << nbits;
    nbits += 3;
    while (nbits >= 8) {
      data += static_cast<char>(bits & 0xff);
      bits >>= 8;
      nbits -= 8;
    }
  };
  for (int p = 0; p < width * height; ++p) {
    if (p % 2 == 0) code(4);
    code(static_cast<std::uint32_t>(colour_index(p % width, p / width)));
  }
  code(5);
  if (nbits > 0) data += static_cast<char>(bits & 0xff);
  for (std::size_t at = 0; at < data.size(); at += 255) {
    const std::string block = data.substr(at, 255);
    out += static_cast<char>(block.size());
    out += block;
  }
  return out + std::string("\0;", 2);  // the end of the image data, then the trailer 0x3B
}

// A 24-bit BMP, rows bottom-up, each padded to a multiple of 4 bytes.
inline std::string bmp_file(int width, int height) {
  const int row = (3 * width + 3) / 4 * 4;
  std::string out = "BM";
  put_le(out, static_cast<std::uint32_t>(54 + row * height), 4);
  put_le(out, 0, 4);
  put_le(out, 54, 4);  // where the pixels start
  put_le(out, 40, 4);  // BITMAPINFOHEADER
  put_le(out, static_cast<std::uint32_t>(width), 4);
  put_le(out, static_cast<std::uint32_t>(height), 4);
  put_le(out, 1, 2);
  put_le(out, 24, 2);
  put_le(out, 0, 4);  // no compression
  put_le(out, static_cast<std::uint32_t>(row * height), 4);
  put_le(out, 2835, 4);
  put_le(out, 2835, 4);
  put_le(out, 0, 4);
  put_le(out, 0, 4);
  for (int y = height - 1; y >= 0; --y) {
    for (int x = 0; x < width; ++x) {
      const auto& c = kPalette[static_cast<std::size_t>(colour_index(x, y))];
      out += {static_cast<char>(c[2]), static_cast<char>(c[1]), static_cast<char>(c[0])};
    }
    out += std::string(static_cast<std::size_t>(row - 3 * width), '\0');
  }
  return out;
}

// A binary PPM (P6): a text header, then the RGB bytes.
inline std::string ppm_file(int width, int height) {
  std::string out = "P6\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (unsigned char v : kPalette[static_cast<std::size_t>(colour_index(x, y))])
        out += static_cast<char>(v);
  return out;
}

// An uncompressed true-colour TGA (type 2), rows top-down, BGR.
inline std::string tga_file(int width, int height) {
  std::string out(12, '\0');
  out[2] = 2;
  put_le(out, static_cast<std::uint32_t>(width), 2);
  put_le(out, static_cast<std::uint32_t>(height), 2);
  out += {24, 0x20};  // bits per pixel; the first row is the top one
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto& c = kPalette[static_cast<std::size_t>(colour_index(x, y))];
      out += {static_cast<char>(c[2]), static_cast<char>(c[1]), static_cast<char>(c[0])};
    }
  return out;
}

}  // namespace attend::testing
