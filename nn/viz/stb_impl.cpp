// The one translation unit that compiles stb's image reader and writer (libstb-dev ships
// them as headers: each must be compiled exactly once in a program, with its
// *_IMPLEMENTATION macro defined). Everything else includes the headers without it.
//
// STBI_FAILURE_USERMSG is not set: stb then keeps its short, specific failure reasons
// ("bad png sig", "unknown image type"), which read_image puts into its error messages.
//
// PNG files are compressed by zlib (already linked for the data files and the checkpoints)
// instead of stb's own deflate, and every row is filtered by Paeth's predictor instead of
// trying all five PNG filters on it: a strip of lesson 09 (1629 x 204 pixels) took 34 ms to
// encode with stb's defaults and 7 ms this way, and its file is smaller (119 KB against
// 142 KB). The pixels are the same; only the bytes that store them differ.
#include <zlib.h>

#include <cstdlib>

namespace {

// stb's PNG writer calls this for the image's zlib stream and frees the result with free().
// Its level is stb's stbi_write_png_compression_level, set below to zlib's fastest.
unsigned char* compress_with_zlib(unsigned char* data, int length, int* out_length, int level) {
  uLongf size = compressBound(static_cast<uLong>(length));
  auto* out = static_cast<unsigned char*>(std::malloc(size));
  if (out == nullptr) return nullptr;
  level = level < Z_NO_COMPRESSION     ? Z_NO_COMPRESSION
          : level > Z_BEST_COMPRESSION ? Z_BEST_COMPRESSION
                                       : level;
  if (compress2(out, &size, data, static_cast<uLong>(length), level) != Z_OK) {
    std::free(out);
    return nullptr;  // stb_image_write then fails, and write_png says so
  }
  *out_length = static_cast<int>(size);
  return out;
}

}  // namespace

#define STBIW_ZLIB_COMPRESS compress_with_zlib
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>

namespace {

constexpr int kPaethFilter = 4;  // PNG filter type 4 (stb tries 0-4 on every row by default)
// Z_BEST_SPEED (1): zlib's default level 6 made the strip 18% smaller and took 3x longer.
const bool kPngSettings = (stbi_write_force_png_filter = kPaethFilter,
                           stbi_write_png_compression_level = Z_BEST_SPEED, true);

}  // namespace

// This file defines stb's implementation macros and STBIW_ZLIB_COMPRESS: a unity build must
// not carry them into the next file (nn/viz/CMakeLists.txt also keeps this file on its own).
#undef STBIW_ZLIB_COMPRESS
#undef STB_IMAGE_IMPLEMENTATION
#undef STB_IMAGE_WRITE_IMPLEMENTATION
