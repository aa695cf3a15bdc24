// Fuzzing the data readers: IDX (plain and gzip), a Fashion-MNIST folder, R's lazy-load
// database of the novels, the German-English dictionary and the accuracy curve's CSV. Each
// gets thousands of damaged copies of a valid file written here (tests/fuzz/mutations.h).
#include <zlib.h>

#include "mutations.h"
#include "nn/data/idx.h"
#include "scratch_dir.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;

namespace {

// An IDX file of `type` holding 0, 1, 2, ... in `shape`.
std::string idx_bytes(const ScratchDir& dir, data::IdxType type, const Shape& shape, bool gz) {
  const std::string path = dir.file("valid.idx");
  NDArray values = NDArray::arange(0, static_cast<double>(shape.numel()), 1, kFloat64);
  data::write_idx(path, values.reshape(shape), type, gz);
  return file_contents(path);
}

void put_u32_be(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

std::string zlib_compress(const std::string& data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  REQUIRE(compress(reinterpret_cast<Bytef*>(out.data()), &size,
                   reinterpret_cast<const Bytef*>(data.data()),
                   static_cast<uLong>(data.size())) == Z_OK);
  out.resize(size);
  return out;
}

// One record of an R lazy-load database: the payload's length, then the payload compressed.
std::string rdb_record(const std::string& payload) {
  std::string record;
  put_u32_be(record, static_cast<std::uint32_t>(payload.size()));
  return record + zlib_compress(payload);
}

// A character vector as R serialises it (XDR version 3), as test_text_corpus.cpp writes it.
std::string r_strings(const std::vector<std::string>& strings) {
  std::string s = "X\n";
  for (std::uint32_t v : {3u, 0x040201u, 0x030500u, 5u}) put_u32_be(s, v);
  s += "UTF-8";
  put_u32_be(s, 16);  // STRSXP
  put_u32_be(s, static_cast<std::uint32_t>(strings.size()));
  for (const std::string& e : strings) {
    put_u32_be(s, 0x00040009);  // CHARSXP
    put_u32_be(s, static_cast<std::uint32_t>(e.size()));
    s += e;
  }
  return s;
}

// The number fields of r_strings' output: version, encoding length, type, count, and the
// type and length of the first two elements.
std::vector<NumberField> r_string_fields() {
  std::vector<NumberField> fields;
  for (std::size_t offset : {2, 14, 23, 27, 31, 35}) fields.push_back({offset, 4, Endian::kBig});
  return fields;
}

std::string gzip(const std::string& data, const ScratchDir& dir) {
  const std::string path = dir.file("gzip.gz");
  std::remove(path.c_str());  // a new file, not a truncated one (see fuzz_detail::write_file)
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  REQUIRE(gzwrite(file, data.data(), static_cast<unsigned>(data.size())) ==
          static_cast<int>(data.size()));
  REQUIRE(gzclose(file) == Z_OK);
  return file_contents(path);
}

// dictd's base 64 numbers.
std::string base64_number(std::size_t value) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string digits;
  do {
    digits.insert(digits.begin(), kAlphabet[value % 64]);
    value /= 64;
  } while (value > 0);
  return digits;
}

}  // namespace

TEST_CASE("fuzz: IDX files, plain and gzip-compressed", "[fuzz]") {
  ScratchDir dir("fuzz-idx");
  const auto read = [](const std::string& path) {
    data::read_idx(path).to_array(kFloat32);
    data::read_idx(path, 2).to_array(kFloat64);
  };
  for (data::IdxType type : {data::IdxType::u8, data::IdxType::i16, data::IdxType::f64}) {
    FuzzTarget t("IDX", dir.file("images.idx"));
    t.valid = idx_bytes(dir, type, {3, 4, 5}, false);
    t.fields = {{2, 1, Endian::kBig},
                {3, 1, Endian::kBig},
                {4, 4, Endian::kBig},
                {8, 4, Endian::kBig},
                {12, 4, Endian::kBig}};
    check_promise(fuzz_reader(t, read), "IDX");
  }
  // The compressed bytes themselves damaged, and a sound gzip stream of a damaged IDX file.
  FuzzTarget gz("IDX.gz", dir.file("images.idx.gz"));
  gz.valid = idx_bytes(dir, data::IdxType::u8, {3, 4, 5}, true);
  check_promise(fuzz_reader(gz, read), "IDX.gz");
  FuzzTarget inner("IDX in gzip", dir.file("inner.idx.gz"));
  inner.valid = idx_bytes(dir, data::IdxType::u8, {3, 4, 5}, false);
  inner.fields = {{3, 1, Endian::kBig}, {4, 4, Endian::kBig}, {8, 4, Endian::kBig}};
  inner.wrap = [&](const std::string& bytes) { return gzip(bytes, dir); };
  inner.random_mutations = 100;
  check_promise(fuzz_reader(inner, read), "IDX in gzip");
}

TEST_CASE("fuzz: a Fashion-MNIST folder with damaged labels", "[fuzz]") {
  ScratchDir dir("fuzz-fashion");
  const std::string folder = dir.path().string();
  NDArray images = NDArray::zeros({3, 28, 28}, kFloat64);
  data::write_idx(dir.file("t10k-images-idx3-ubyte"), images, data::IdxType::u8, false);
  NDArray labels = NDArray::from_list({1, 9, 0}, {3}, kFloat64);
  FuzzTarget t("Fashion-MNIST labels", dir.file("t10k-labels-idx1-ubyte"));
  data::write_idx(t.path, labels, data::IdxType::u8, false);
  t.valid = file_contents(t.path);
  t.fields = {{2, 1, Endian::kBig}, {3, 1, Endian::kBig}, {4, 4, Endian::kBig}};
  t.must_name = folder;  // the labels' file, or the folder when images and labels disagree
  check_promise(
      fuzz_reader(
          t, [&](const std::string&) { data::load_fashion_mnist(data::Split::kTest, folder); }),
      "Fashion-MNIST");
}

TEST_CASE("fuzz: R's lazy-load database (the novels)", "[fuzz]") {
  ScratchDir dir("fuzz-rdb");
  const std::string first = r_strings({"EMMA", "", "Emma Woodhouse, handsome, clever"});
  const std::string second = r_strings({"PERSUASION", "Sir Walter Elliot"});
  const auto read = [](const std::string& path) { data::read_r_character_vectors(path); };
  // The file as it is: damaged zlib streams and record lengths.
  FuzzTarget file("rdb", dir.file("Rdata.rdb"));
  file.valid = rdb_record(first) + rdb_record(second);
  file.fields = {{0, 4, Endian::kBig}};
  check_promise(fuzz_reader(file, read), "rdb");
  // Sound zlib streams of damaged serialisations: what the parser after zlib sees.
  FuzzTarget payload("rdb payload", dir.file("payload.rdb"));
  payload.valid = first;
  payload.fields = r_string_fields();
  payload.wrap = [&](const std::string& bytes) { return rdb_record(bytes) + rdb_record(second); };
  check_promise(fuzz_reader(payload, read), "rdb payload");
}

TEST_CASE("fuzz: the German-English dictionary's index and text", "[fuzz]") {
  ScratchDir dir("fuzz-freedict");
  const std::string folder = dir.path().string();
  const std::string entries[] = {"Mir ist sehr kalt. /x/\nI'm freezing.\n",
                                 "Wo ist der Bahnhof? /x/\nWhere is the station?\n"};
  std::string text, index;
  std::vector<TextField> numbers;
  for (const std::string& entry : entries) {
    index += "headword\t";
    numbers.push_back({index.size(), base64_number(text.size()).size()});
    index += base64_number(text.size()) + "\t";
    numbers.push_back({index.size(), base64_number(entry.size()).size()});
    index += base64_number(entry.size()) + "\n";
    text += entry;
  }
  const auto read = [&](const std::string&) { data::load_freedict_sentences(folder); };
  const std::string dict_path = dir.file("freedict-deu-eng.dict.dz");
  FuzzTarget t("freedict index", dir.file("freedict-deu-eng.index"));
  t.valid = index;
  t.text_fields = numbers;
  t.must_name = folder;
  fuzz_detail::write_file(dict_path, gzip(text, dir));
  check_promise(fuzz_reader(t, read), "freedict index");

  FuzzTarget dict("freedict text", dict_path, gzip(text, dir));
  dict.must_name = folder;
  fuzz_detail::write_file(t.path, index);
  check_promise(fuzz_reader(dict, read), "freedict text");
}

TEST_CASE("fuzz: the accuracy curve's CSV", "[fuzz]") {
  ScratchDir dir("fuzz-csv");
  FuzzTarget t("length curve", dir.file("curve.csv"));
  t.valid = "low,high,count,correct,accuracy\n6,9,10,7,0.7\n10,13,4,4,1\n";
  t.text_fields = {{32, 1}, {34, 1}, {36, 2}, {39, 1}};  // low, high, count, correct
  check_promise(fuzz_reader(t, [](const std::string& path) { seq::read_length_curve(path); }),
                "length curve");
}
