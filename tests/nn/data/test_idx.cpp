// IDX files: written and read back, plain and gzip-compressed, in every element type; and
// every kind of damage reported as one error naming the file.
#include <limits>

#include "nn/data/idx.h"
#include "scratch_dir.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using data::IdxType;

namespace {

// A small uint8 IDX array [3, 2, 2] holding 0, 20, ..., 220 and 255 at the end.
NDArray small_bytes() {
  NDArray values = NDArray::arange(0, 240, 20, kFloat64).reshape({3, 2, 2});
  values.set({2, 1, 1}, 255);
  return values;
}

}  // namespace

TEST_CASE("IDX round trip, plain and gzip-compressed", "[data]") {
  ScratchDir dir("idx-roundtrip");
  const NDArray values = small_bytes();
  for (bool compress : {false, true}) {
    INFO("compressed: " << compress);
    const std::string path = dir.file(compress ? "a.idx.gz" : "a.idx");
    data::write_idx(path, values, IdxType::u8, compress);
    const std::vector<unsigned char> bytes = read_bytes(path);
    REQUIRE(bytes.size() >= 4);
    if (compress) {
      CHECK((bytes[0] == 0x1f && bytes[1] == 0x8b));  // the gzip signature
    } else {
      // The documented header: 0 0 type ndim, then big-endian sizes, then the elements.
      CHECK(bytes == std::vector<unsigned char>{0,  0,   8,   3,   0,   0,   0,   3,  0,  0,
                                                0,  2,   0,   0,   0,   2,   0,   20, 40, 60,
                                                80, 100, 120, 140, 160, 180, 200, 255});
    }
    data::IdxArray idx = data::read_idx(path);
    CHECK(idx.type == IdxType::u8);
    CHECK(idx.shape == Shape{3, 2, 2});
    check_close(idx.to_array(kFloat64), values, 0);
    // Images: scaled to [0, 1] in float32; labels: int64.
    NDArray scaled = idx.to_array(kFloat32, 1.0 / 255);
    CHECK(scaled.dtype() == kFloat32);
    CHECK(scaled.at({0, 0, 0}) == 0.0f);
    CHECK(scaled.at({2, 1, 1}) == 1.0f);
    CHECK(idx.to_array(kInt64).at({1, 0, 1}) == 100);
  }
}

TEST_CASE("IDX round trip of every element type", "[data]") {
  ScratchDir dir("idx-types");
  struct Case {
    IdxType type;
    NDArray values;
  };
  const std::vector<Case> cases = {
      {IdxType::i8, f64({-128, -1, 0, 127}, {2, 2})},
      {IdxType::i16, f64({-32768, -300, 300, 32767}, {4})},
      {IdxType::i32, f64({-2147483648.0, -70000, 70000, 2147483647.0}, {1, 4})},
      {IdxType::f32, f64({-1.5, 0.25, 1099511627776.0, -0.0}, {4})},
      {IdxType::f64, f64({0.1, -1e300, 1e-300, 2.5}, {2, 1, 2})},
  };
  for (const Case& c : cases) {
    INFO("type " << static_cast<int>(c.type));
    const std::string path = dir.file("t.idx.gz");
    data::write_idx(path, c.values, c.type, true);
    data::IdxArray idx = data::read_idx(path);
    CHECK(idx.type == c.type);
    CHECK(idx.shape == c.values.shape());
    CHECK(idx.bytes.size() ==
          static_cast<std::size_t>(c.values.numel()) * data::idx_type_size(c.type));
    check_close(idx.to_array(kFloat64), c.values, 0);
  }
}

TEST_CASE("read_idx with max_items reads only the first items", "[data]") {
  ScratchDir dir("idx-partial");
  const std::string path = dir.file("a.idx.gz");
  data::write_idx(path, small_bytes(), IdxType::u8, true);
  data::IdxArray first_two = data::read_idx(path, 2);
  CHECK(first_two.shape == Shape{2, 2, 2});
  check_close(first_two.to_array(kFloat64), f64({0, 20, 40, 60, 80, 100, 120, 140}, {2, 2, 2}), 0);
  CHECK(data::read_idx(path, 3).shape == Shape{3, 2, 2});
  CHECK(data::read_idx(path, 50).shape == Shape{3, 2, 2});  // more than there are: all
}

TEST_CASE("a truncated IDX file says how much is missing", "[data]") {
  ScratchDir dir("idx-truncated");
  const std::string good = dir.file("good.idx");
  data::write_idx(good, small_bytes(), IdxType::u8, false);
  const std::vector<unsigned char> bytes = read_bytes(good);
  const std::string path = dir.file("cut.idx");
  auto message_at = [&](std::size_t cut) {
    write_bytes(path, std::vector<unsigned char>(bytes.begin(), bytes.begin() + cut));
    return error_message([&] { data::read_idx(path); });
  };
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO("cut after " << cut << " bytes");
    CHECK_THAT(message_at(cut), StartsWith("IDX file '" + path + "' is truncated (expected "));
  }
  CHECK(message_at(2) ==
        "IDX file '" + path + "' is truncated (expected 4 bytes of magic number, found 2)");
  CHECK(message_at(9) ==
        "IDX file '" + path + "' is truncated (expected 12 bytes of sizes, found 5)");
  CHECK(message_at(21) == "IDX file '" + path +
                              "' is truncated (expected 12 bytes of data for shape [3,2,2], "
                              "found 5)");
}

TEST_CASE("a truncated or damaged gzip IDX file is an error, not short data", "[data]") {
  ScratchDir dir("idx-gzip");
  const std::string good = dir.file("good.idx.gz");
  // Enough varied data that the compressed stream has a body to cut and to damage.
  NDArray values = NDArray::empty({200, 10}, kFloat64);
  Generator gen(3);
  for (double& v : values.span<double>()) v = static_cast<double>(gen.randint(256));
  data::write_idx(good, values, IdxType::u8, true);
  const std::vector<unsigned char> bytes = read_bytes(good);
  const std::string path = dir.file("bad.idx.gz");
  for (std::size_t cut : {bytes.size() / 2, bytes.size() - 3}) {
    INFO("cut after " << cut << " of " << bytes.size());
    write_bytes(path, std::vector<unsigned char>(bytes.begin(), bytes.begin() + cut));
    CHECK(error_message([&] { data::read_idx(path); }) ==
          "IDX file '" + path + "' is truncated (its gzip stream ends early)");
  }
  // A changed byte inside the compressed data: zlib's checks (the deflate codes and the
  // CRC-32 at the end of the gzip stream) catch it.
  std::vector<unsigned char> damaged = bytes;
  damaged[bytes.size() / 2] ^= 0xFF;
  write_bytes(path, damaged);
  CHECK_THAT(error_message([&] { data::read_idx(path); }),
             StartsWith("IDX file '" + path + "' is corrupt (gzip: "));
}

TEST_CASE("IDX files with a bad header or extra data are refused", "[data]") {
  ScratchDir dir("idx-header");
  const std::string path = dir.file("x.idx");
  const std::string prefix = "IDX file '" + path + "' ";

  const std::string text = "hello, world";
  write_bytes(path, std::vector<unsigned char>(text.begin(), text.end()));
  CHECK(error_message([&] { data::read_idx(path); }) ==
        "'" + path +
            "' is not an IDX file (its magic number 68 65 6C 6C does not start with two "
            "zero bytes)");
  write_bytes(path, {0, 0, 0x07, 1, 0, 0, 0, 1, 5});
  CHECK(error_message([&] { data::read_idx(path); }) ==
        prefix + "has unknown element type 0x07 (known: 0x08 0x09 0x0B 0x0C 0x0D 0x0E)");
  write_bytes(path, {0, 0, 0x08, 0});
  CHECK(error_message([&] { data::read_idx(path); }) ==
        prefix + "has 0 dimensions; attend reads 1 to 8");
  write_bytes(path, {0, 0, 0x08, 9});
  CHECK(error_message([&] { data::read_idx(path); }) ==
        prefix + "has 9 dimensions; attend reads 1 to 8");
  write_bytes(path, {0, 0, 0x08, 3, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255});
  CHECK(error_message([&] { data::read_idx(path); }) ==
        prefix +
            "announces shape [4294967295,4294967295,4294967295]: too large to be real (the "
            "header is damaged)");
  write_bytes(path, {0, 0, 0x08, 1, 0, 0, 0, 2, 7, 8, 9});
  CHECK(error_message([&] { data::read_idx(path); }) ==
        prefix + "is longer than its header says (more than 2 bytes of data for shape [2])");
  CHECK(error_message([&] { data::read_idx(dir.file("none.idx")); }) ==
        "cannot open IDX file '" + dir.file("none.idx") + "': No such file or directory");
}

TEST_CASE("write_idx refuses values its type cannot hold", "[data]") {
  ScratchDir dir("idx-write");
  const std::string path = dir.file("w.idx");
  CHECK_THAT(error_message([&] {
               data::write_idx(path, f64({1, 256}, {2}), IdxType::u8, false);
             }),
             Contains("256 cannot be stored as IDX type 0x08 (whole numbers 0 to 255)"));
  CHECK_THAT(error_message([&] { data::write_idx(path, f64({1.5}, {1}), IdxType::i32, false); }),
             Contains("1.5 cannot be stored as IDX type 0x0C"));
  CHECK_THAT(error_message(
                 [&] { data::write_idx(path, NDArray::scalar(1, kFloat64), IdxType::u8, false); }),
             Contains("IDX needs at least one axis"));
  CHECK_THAT(error_message([&] {
               data::write_idx(dir.file("no/folder/w.idx"), f64({1}, {1}), IdxType::u8, false);
             }),
             StartsWith("cannot create IDX file"));
  // Converting float data to int64 is refused rather than silently truncated.
  data::write_idx(path, f64({0.5}, {1}), IdxType::f32, false);
  CHECK_THAT(error_message([&] { data::read_idx(path).to_array(kInt64); }),
             Contains("int64 needs integer IDX data"));
}
