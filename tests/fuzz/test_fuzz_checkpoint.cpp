// Fuzzing the checkpoint reader (nn/io/checkpoint_file.h) and load_checkpoint on top of it.
// The CRC-32 at the end of the file rejects any changed byte, so each mutation is tried twice:
// as it is, and with the checksum recomputed, which lets it reach the parser of the entries
// and the checks of load_checkpoint (a damaged file whose damage the checksum cannot see).
#include <zlib.h>

#include "mutations.h"
#include "nn/io/checkpoint_file.h"
#include "scratch_dir.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;

namespace {

std::uint64_t little_endian(const std::string& bytes, std::size_t offset, int width) {
  std::uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i)
    value = value << 8 | static_cast<unsigned char>(bytes[offset + static_cast<std::size_t>(i)]);
  return value;
}

// The number fields of a valid checkpoint (docs/checkpoint_format.md): the header's version,
// size and count, and each entry's name length, dtype, rank and sizes.
std::vector<NumberField> checkpoint_fields(const std::string& bytes) {
  std::vector<NumberField> fields = {
      {8, 4, Endian::kLittle}, {12, 8, Endian::kLittle}, {20, 4, Endian::kLittle}};
  std::size_t at = 24;
  const std::uint64_t count = little_endian(bytes, 20, 4);
  for (std::uint64_t e = 0; e < count; ++e) {
    fields.push_back({at, 4, Endian::kLittle});
    at += 4 + little_endian(bytes, at, 4);
    const unsigned char dtype = static_cast<unsigned char>(bytes[at]);
    fields.push_back({at, 1, Endian::kLittle});
    fields.push_back({at + 1, 1, Endian::kLittle});
    const std::size_t rank = static_cast<unsigned char>(bytes[at + 1]);
    at += 2;
    std::uint64_t elements = 1;
    for (std::size_t d = 0; d < rank; ++d, at += 8) {
      fields.push_back({at, 8, Endian::kLittle});
      elements *= little_endian(bytes, at, 8);
    }
    at += elements * (dtype == 1 ? 4 : 8);
  }
  REQUIRE(at + 4 == bytes.size());
  return fields;
}

// The bytes with their last four replaced by the CRC-32 of the rest.
std::string with_checksum(std::string bytes) {
  if (bytes.size() < 4) return bytes;
  const std::size_t body = bytes.size() - 4;
  const auto crc = static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(body)));
  for (std::size_t i = 0; i < 4; ++i) bytes[body + i] = static_cast<char>(crc >> (8 * i));
  return bytes;
}

void fuzz_both_ways(FuzzTarget target, const std::function<void(const std::string&)>& read) {
  check_promise(fuzz_reader(target, read), target.name);
  target.name += " (checksum recomputed)";
  target.wrap = with_checksum;
  check_promise(fuzz_reader(target, read), target.name);
}

}  // namespace

TEST_CASE("fuzz: checkpoint files", "[fuzz]") {
  ScratchDir dir("fuzz-checkpoint");
  FuzzTarget t("checkpoint", dir.file("fuzz.ckpt"));
  const std::vector<nn::CheckpointEntry> entries = {
      {"model/w", NDArray::from_list({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat32)},
      {"model/b", NDArray::from_list({0.5, -0.5}, {2}, kFloat64)},
      {"empty", NDArray::zeros({0, 4}, kFloat32)},
      {"training/step", NDArray::from_list({42}, {}, kInt64)}};
  nn::write_checkpoint_file(t.path, entries);
  t.valid = file_contents(t.path);
  t.fields = checkpoint_fields(t.valid);
  fuzz_both_ways(t, [](const std::string& path) { nn::read_checkpoint_file(path); });
}

TEST_CASE("fuzz: load_checkpoint into a model and its optimizer", "[fuzz]") {
  ScratchDir dir("fuzz-load-checkpoint");
  Generator gen(7);
  nn::Linear model(3, 2, true, gen);
  optim::Adam adam(model.parameters());
  sum(model(Tensor(NDArray::ones({1, 3})))).backward();
  adam.step();  // the optimizer has state to save
  FuzzTarget t("model checkpoint", dir.file("model.ckpt"));
  nn::save_checkpoint(t.path, model, &adam, {5, gen.state()});
  t.valid = file_contents(t.path);
  t.fields = checkpoint_fields(t.valid);
  t.random_mutations = 200;
  fuzz_both_ways(t, [&](const std::string& path) { nn::load_checkpoint(path, model, &adam); });
}
