// The checkpoint file format: round trips, the documented layout, and every kind of damage
// (truncation at any byte, a changed byte, another file, a newer version, no file), each
// reported as one readable error. And saving is atomic.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "checkpoint_helpers.h"
#include "nn/io/atomic_file.h"
#include "nn/io/checkpoint_file.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::uint64_t little_endian(const std::vector<unsigned char>& bytes, std::size_t offset,
                            std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < size; ++i) value |= std::uint64_t{bytes[offset + i]} << (8 * i);
  return value;
}

// A small checkpoint of one Linear(3 -> 2) named "fc", without optimizer.
std::string save_small(const ScratchDir& dir, const std::string& name = "small.ckpt") {
  Generator init(11);
  OneLayer model(3, 2, init);
  const std::string path = dir.file(name);
  nn::save_checkpoint(path, model, nullptr, {3, Generator(5).state()});
  return path;
}

void rewrite_checksum(std::vector<unsigned char>& bytes) {
  const std::size_t body = bytes.size() - 4;
  const uLong crc = crc32(0, bytes.data(), static_cast<uInt>(body));
  for (int i = 0; i < 4; ++i) bytes[body + i] = static_cast<unsigned char>(crc >> (8 * i));
}

}  // namespace

TEST_CASE("checkpoint files round-trip every dtype and shape exactly", "[io]") {
  ScratchDir dir("roundtrip");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<nn::CheckpointEntry> entries = {
      {"floats", NDArray::from_list({1.5, -0.0, 3.25e-30, 7, 8, 9}, {2, 3})},
      {"doubles", NDArray::from_list({0.1, nan, -1e300}, {3}, kFloat64)},
      {"scalar", NDArray::scalar(42, kInt64)},
      {"empty", NDArray::zeros({0, 5})},
      {"eight dims", NDArray::arange(2, kFloat64).reshape({1, 1, 1, 1, 1, 1, 1, 2})},
  };
  NDArray big = NDArray::empty({3}, kInt64);
  big.data<std::int64_t>()[0] = std::numeric_limits<std::int64_t>::min();
  big.data<std::int64_t>()[1] = std::numeric_limits<std::int64_t>::max();
  big.data<std::int64_t>()[2] = -1;
  entries.push_back({"int64 extremes", big});

  const std::string path = dir.file("all.ckpt");
  nn::write_checkpoint_file(path, entries);
  std::vector<nn::CheckpointEntry> loaded = nn::read_checkpoint_file(path);
  REQUIRE(loaded.size() == entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    INFO(entries[i].name);
    CHECK(loaded[i].name == entries[i].name);
    CHECK(loaded[i].value.dtype() == entries[i].value.dtype());
    CHECK(loaded[i].value.shape() == entries[i].value.shape());
    REQUIRE(loaded[i].value.nbytes() == entries[i].value.nbytes());
    // Bytewise, so that NaN and -0.0 count as equal to themselves.
    CHECK(std::memcmp(loaded[i].value.raw_data(), entries[i].value.raw_data(),
                      entries[i].value.nbytes()) == 0);
  }
}

TEST_CASE("the header and first entry are laid out as docs/checkpoint_format.md says", "[io]") {
  ScratchDir dir("layout");
  const std::vector<unsigned char> bytes = read_bytes(save_small(dir));
  // 24 header + 61 fc.weight (37 + 24 of data) + 35 fc.bias + 27 step + 58 rng + 4 checksum
  REQUIRE(bytes.size() == 209);
  CHECK(std::string(bytes.begin(), bytes.begin() + 8) == "ATTENDCK");
  CHECK(little_endian(bytes, 8, 4) == 1);              // format version
  CHECK(little_endian(bytes, 12, 8) == bytes.size());  // file size
  CHECK(little_endian(bytes, 20, 4) == 4);   // fc.weight, fc.bias, training step, generator
  CHECK(little_endian(bytes, 24, 4) == 15);  // name length
  CHECK(std::string(bytes.begin() + 28, bytes.begin() + 43) == "model/fc.weight");
  CHECK(bytes[43] == 1);  // float32
  CHECK(bytes[44] == 2);  // rank
  CHECK(little_endian(bytes, 45, 8) == 2);
  CHECK(little_endian(bytes, 53, 8) == 3);
  CHECK(little_endian(bytes, 85, 4) == 13);  // the next entry: "model/fc.bias"
  CHECK(std::string(bytes.begin() + 89, bytes.begin() + 102) == "model/fc.bias");
  // The checksum is the CRC-32 of everything before it.
  const std::size_t body = bytes.size() - 4;
  CHECK(little_endian(bytes, body, 4) == crc32(0, bytes.data(), static_cast<uInt>(body)));
}

TEST_CASE("a checkpoint cut at any byte is reported as truncated", "[io]") {
  ScratchDir dir("truncated");
  const std::string good = save_small(dir);
  const std::vector<unsigned char> bytes = read_bytes(good);
  const std::string cut_path = dir.file("cut.ckpt");
  Generator init(0);
  OneLayer model(3, 2, init);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO("cut after " << cut << " of " << bytes.size() << " bytes");
    write_bytes(cut_path, std::vector<unsigned char>(bytes.begin(), bytes.begin() + cut));
    CHECK_THAT(error_message([&] { nn::load_checkpoint(cut_path, model); }),
               StartsWith("checkpoint '" + cut_path + "' is truncated (expected "));
  }
  // The message names the piece that is cut (offsets from docs/checkpoint_format.md: the
  // weight's 24 bytes of data start at byte 61).
  auto message_at = [&](std::size_t cut) {
    write_bytes(cut_path, std::vector<unsigned char>(bytes.begin(), bytes.begin() + cut));
    return error_message([&] { nn::read_checkpoint_file(cut_path); });
  };
  const std::string prefix = "checkpoint '" + cut_path + "' is truncated ";
  CHECK(message_at(71) == prefix + "(expected 24 bytes of parameter 'fc.weight', found 10)");
  CHECK(message_at(50) ==
        prefix + "(expected 8 bytes of the shape of parameter 'fc.weight', found 5)");
  CHECK(message_at(30) == prefix + "(expected 15 bytes of the name of entry 0, found 2)");
  CHECK(message_at(5) == prefix + "(expected 8 bytes of magic number, found 5)");
  CHECK(message_at(bytes.size() - 2) == prefix + "(expected 4 bytes of checksum, found 2)");
  CHECK(message_at(0) == prefix + "(expected 8 bytes of magic number, found 0)");
}

TEST_CASE("a changed byte anywhere is a checksum mismatch", "[io]") {
  ScratchDir dir("flipped");
  const std::vector<unsigned char> bytes = read_bytes(save_small(dir));
  const std::string path = dir.file("flipped.ckpt");
  // Bytes 0-7 are the magic number: changing one makes the file "not a checkpoint".
  for (std::size_t i = 8; i < bytes.size(); ++i) {
    INFO("byte " << i << " of " << bytes.size());
    std::vector<unsigned char> damaged = bytes;
    damaged[i] ^= 0x10;
    write_bytes(path, damaged);
    CHECK_THAT(error_message([&] { nn::read_checkpoint_file(path); }),
               StartsWith("checkpoint '" + path + "': checksum mismatch: the file is corrupt"));
  }
  std::vector<unsigned char> damaged = bytes;
  damaged[3] ^= 0x01;
  write_bytes(path, damaged);
  CHECK_THAT(error_message([&] { nn::read_checkpoint_file(path); }),
             Contains("is not an attend checkpoint"));
}

TEST_CASE("a file that is not a checkpoint says so", "[io]") {
  ScratchDir dir("magic");
  const std::string path = dir.file("notes.txt");
  const std::string text = "These are my notes, not a checkpoint.";
  write_bytes(path, std::vector<unsigned char>(text.begin(), text.end()));
  CHECK(error_message([&] { nn::read_checkpoint_file(path); }) ==
        "'" + path +
            "' is not an attend checkpoint (it does not start with the magic number "
            "\"ATTENDCK\")");
  CHECK_THAT(error_message([&] { nn::read_checkpoint_file(dir.file("")); }),
             Contains("it is a folder, not a file"));
}

TEST_CASE("a checkpoint from a newer format version is refused by name", "[io]") {
  ScratchDir dir("version");
  std::vector<unsigned char> bytes = read_bytes(save_small(dir));
  bytes[8] = 2;  // version 2, with a valid checksum: a sound file from a newer attend
  rewrite_checksum(bytes);
  const std::string path = dir.file("future.ckpt");
  write_bytes(path, bytes);
  CHECK(error_message([&] { nn::read_checkpoint_file(path); }) ==
        "checkpoint '" + path +
            "' has format version 2, but this build of attend reads version 1 (it was written by "
            "a newer attend: update attend)");
  // An older version (0, never released) is refused the same way, without that advice.
  bytes[8] = 0;
  rewrite_checksum(bytes);
  write_bytes(path, bytes);
  CHECK(error_message([&] { nn::read_checkpoint_file(path); }) ==
        "checkpoint '" + path + "' has format version 0, but this build of attend reads version 1");
}

TEST_CASE("a missing checkpoint file is one clear error", "[io]") {
  ScratchDir dir("missing");
  Generator init(0);
  OneLayer model(3, 2, init);
  const std::string path = dir.file("nowhere.ckpt");
  CHECK(error_message([&] { nn::load_checkpoint(path, model); }) ==
        "cannot open checkpoint '" + path + "': No such file or directory");
}

TEST_CASE("a save that fails midway leaves the previous checkpoint intact", "[io]") {
  ScratchDir dir("atomic");
  Generator init(21);
  OneLayer model(64, 64, init);  // about 16.7 kB on disk
  const std::string path = dir.file("model.ckpt");
  nn::save_checkpoint(path, model, nullptr, {1, {}});
  const std::vector<std::vector<double>> saved = parameter_values(model);
  const auto good_size = std::filesystem::file_size(path);
  REQUIRE(good_size > 16000);

  // New values, then a save that the operating system stops after 8 kB: files may not grow
  // beyond that (RLIMIT_FSIZE, which binds root too), as on a full disk.
  fill_(model.fc.weight.data(), 7.0);
  struct rlimit old_limit {};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 8192;
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // report EFBIG instead of killing the process
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string message = error_message([&] { nn::save_checkpoint(path, model, nullptr, {2, {}}); });
  REQUIRE(setrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  signal(SIGXFSZ, old_handler);
  CHECK_THAT(message, StartsWith("cannot write '" + path + "': "));
  CHECK_THAT(message, Contains("cannot write the temporary file"));
  CHECK_THAT(message, Contains("File too large"));

  // The old file is untouched and loadable, and no temporary file is left behind.
  CHECK(std::filesystem::file_size(path) == good_size);
  CHECK(dir.listing() == std::vector<std::string>{"model.ckpt"});
  Generator other(99);
  OneLayer fresh(64, 64, other);
  CHECK(nn::load_checkpoint(path, fresh).step == 1);
  CHECK(parameter_values(fresh) == saved);
}

TEST_CASE("saving into a missing folder is one clear error and writes nothing", "[io]") {
  ScratchDir dir("nofolder");
  Generator init(0);
  OneLayer model(3, 2, init);
  const std::string path = dir.file("no/such/folder/model.ckpt");
  const std::string message = error_message([&] { nn::save_checkpoint(path, model); });
  CHECK_THAT(message, StartsWith("cannot write '" + path + "': cannot create the temporary file"));
  CHECK_THAT(message, Contains("No such file or directory"));
  CHECK(dir.listing().empty());
}

TEST_CASE("a save whose final rename fails leaves no temporary file behind", "[io]") {
  ScratchDir dir("rename");
  Generator init(0);
  OneLayer model(3, 2, init);
  const std::string folder = dir.file("model.ckpt");  // a folder where the file should go
  std::filesystem::create_directory(folder);
  std::filesystem::create_directory(folder + "/keep");  // not empty: rename() cannot replace it
  const std::string message = error_message([&] { nn::save_checkpoint(folder, model); });
  CHECK_THAT(message,
             StartsWith("cannot write '" + folder + "': cannot rename the temporary file"));
  CHECK(dir.listing() == std::vector<std::string>{"model.ckpt"});
  CHECK(std::filesystem::is_directory(folder + "/keep"));
}

TEST_CASE("the next save removes the temporary file of a killed save, and nothing else", "[io]") {
  ScratchDir dir("stale");
  const std::string path = save_small(dir, "model.ckpt");
  // A save killed midway (kill -9: no destructor runs) leaves its temporary file behind.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    nn::AtomicFileWriter out(path);
    out.write("partial", 7);
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  std::vector<std::string> names = dir.listing();
  std::sort(names.begin(), names.end());
  const std::string stale = "model.ckpt.tmp-" + std::to_string(child) + "-";
  REQUIRE(names.size() == 2);
  REQUIRE(names[1].starts_with(stale));
  // Names the cleaning must leave alone: a temporary of a process that still runs (this one),
  // another checkpoint's temporary, and names that only look like the pattern.
  const std::vector<std::string> kept = {
      "model.ckpt", "model.ckpt.tmp-" + std::to_string(::getpid()) + "-999",
      "model.ckpt.tmp-" + std::to_string(child) + "-x", "model.ckpt.tmp-" + std::to_string(child),
      "other.ckpt.tmp-" + std::to_string(child) + "-0"};
  for (std::size_t i = 1; i < kept.size(); ++i) write_bytes(dir.file(kept[i]), {1, 2, 3});

  save_small(dir, "model.ckpt");
  names = dir.listing();
  std::sort(names.begin(), names.end());
  std::vector<std::string> expected = kept;
  std::sort(expected.begin(), expected.end());
  CHECK(names == expected);
}

TEST_CASE("write_checkpoint_file refuses duplicate, empty and undefined entries", "[io]") {
  ScratchDir dir("bad-entries");
  const std::string path = dir.file("bad.ckpt");
  std::vector<nn::CheckpointEntry> twice = {{"a", NDArray::zeros({1})}, {"a", NDArray::zeros({1})}};
  CHECK_THAT(error_message([&] { nn::write_checkpoint_file(path, twice); }),
             Contains("two entries are named 'a'"));
  std::vector<nn::CheckpointEntry> unnamed = {{"", NDArray::zeros({1})}};
  CHECK_THAT(error_message([&] { nn::write_checkpoint_file(path, unnamed); }),
             Contains("entry names must have 1 to 4096 bytes, got 0 bytes"));
  std::vector<nn::CheckpointEntry> undefined = {{"model/w", NDArray()}};
  CHECK_THAT(error_message([&] { nn::write_checkpoint_file(path, undefined); }),
             Contains("parameter 'w' is undefined"));
  CHECK(dir.listing().empty());
}

TEST_CASE("a shape whose byte count overflows is refused with its sizes", "[io]") {
  ScratchDir dir("huge_shape");
  std::vector<unsigned char> bytes = read_bytes(save_small(dir));
  REQUIRE(bytes[44] == 2);  // the rank of model/fc.weight; its two sizes follow (u64 each)
  for (int i = 0; i < 8; ++i) bytes[45 + i] = bytes[53 + i] = (i == 5);  // 2^40 and 2^40
  rewrite_checksum(bytes);
  const std::string path = dir.file("huge.ckpt");
  write_bytes(path, bytes);
  CHECK_THAT(error_message([&] { nn::read_checkpoint_file(path); }),
             StartsWith("checkpoint '" + path + "' is corrupt: ") &&
                 Contains("impossibly large shape [1099511627776, 1099511627776]"));
}
