// Text for character-level language models: R's lazy-load database written here byte by byte
// and read back, Unicode folded to ASCII by the table, the vocabulary, the 90/10 split, the
// random windows and the generated text.
#include <zlib.h>

#include <fstream>

#include "nn/data/text_corpus.h"
#include "scratch_dir.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

void put_int(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

// One record as R writes it: XDR version 3 header, STRSXP, its CHARSXPs (UTF-8 flag set).
std::string serialised_strings(const std::vector<std::string>& strings) {
  std::string s = "X\n";
  put_int(s, 3);
  put_int(s, 0x040201);
  put_int(s, 0x030500);
  put_int(s, 5);
  s += "UTF-8";
  put_int(s, 16);  // STRSXP
  put_int(s, static_cast<std::uint32_t>(strings.size()));
  for (const std::string& e : strings) {
    put_int(s, 0x00040009);  // CHARSXP, UTF-8
    put_int(s, static_cast<std::uint32_t>(e.size()));
    s += e;
  }
  return s;
}

void append_record(std::string& file, const std::string& data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string compressed(size, '\0');
  REQUIRE(compress(reinterpret_cast<Bytef*>(compressed.data()), &size,
                   reinterpret_cast<const Bytef*>(data.data()),
                   static_cast<uLong>(data.size())) == Z_OK);
  put_int(file, static_cast<std::uint32_t>(data.size()));
  file += compressed.substr(0, size);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("an R lazy-load database of character vectors is read record by record", "[data]") {
  ScratchDir dir("rdb");
  std::string file;
  append_record(file, serialised_strings({"EMMA", "", "Emma Woodhouse, handsome"}));
  append_record(file, serialised_strings({"Persuasion", "Sir Walter Elliot"}));
  write_file(dir.file("Rdata.rdb"), file);
  const auto vectors = data::read_r_character_vectors(dir.file("Rdata.rdb"));
  REQUIRE(vectors.size() == 2);
  CHECK(vectors[0] == std::vector<std::string>{"EMMA", "", "Emma Woodhouse, handsome"});
  CHECK(vectors[1] == std::vector<std::string>{"Persuasion", "Sir Walter Elliot"});

  SECTION("a cut file is one error naming the file and the record") {
    write_file(dir.file("cut.rdb"), file.substr(0, file.size() - 5));
    CHECK_THAT(error_message([&] { data::read_r_character_vectors(dir.file("cut.rdb")); }),
               Contains("cut.rdb', record 1") && Contains("damaged zlib stream"));
  }
  SECTION("the novels need all six titles") {
    CHECK_THAT(error_message([&] { data::read_austen_novels(dir.file("Rdata.rdb")); }),
               Contains("no novel titled \"SENSE AND SENSIBILITY\""));
  }
}

TEST_CASE("a missing book says how to install it", "[data]") {
  CHECK_THAT(error_message([] { data::read_austen_novels("/no/such/Rdata.rdb"); }),
             Contains("scripts/install_book.sh") && Contains("--synthetic"));
  CHECK_THAT(error_message([] { data::read_text_file("/no/such/book.txt"); }),
             Contains("cannot open '/no/such/book.txt'"));
}

TEST_CASE("Unicode punctuation is folded to ASCII by the table and counted", "[data]") {
  const data::FoldedText f = data::fold_to_ascii(
      "\u201CCall me Ishmael.\u201D Some years ago\u2014never mind\u2026 caf\u00E9\r\n"
      "\u2018tis\tnot \u00A3 5\u00BD\xff");
  CHECK(f.text == "\"Call me Ishmael.\" Some years ago--never mind... cafe\n'tis not  5");
  CHECK(f.mapped.at("\u201C") == 1);
  CHECK(f.mapped.at("\u2014") == 1);
  CHECK(f.mapped.at("\t") == 1);
  CHECK(f.dropped.at("\u00A3") == 1);  // the pound sign: not in the table
  CHECK(f.dropped.at("\r") == 1);
  CHECK(f.malformed == 1);  // the byte 0xff
  for (const data::Folding& rule : data::ascii_folding_table()) {
    INFO(rule.from);
    const data::FoldedText one = data::fold_to_ascii(rule.from);
    CHECK(one.text == rule.to);
    for (char c : one.text) CHECK(static_cast<unsigned char>(c) < 0x80);
  }
}

TEST_CASE("the character vocabulary, the 90/10 split and the windows", "[data]") {
  const data::CharCorpus corpus = data::split_corpus("abcabcabcX", 0.9);
  CHECK(corpus.vocabulary.characters() == "Xabc");
  CHECK(corpus.train == std::vector<std::int64_t>{1, 2, 3, 1, 2, 3, 1, 2, 3});
  CHECK(corpus.validation == std::vector<std::int64_t>{0});  // the end of the text
  CHECK(corpus.vocabulary.decode(corpus.train) == "abcabcabc");
  CHECK_THAT(error_message([&] { corpus.vocabulary.id('z'); }), Contains("not in the vocabulary"));
  CHECK_THAT(error_message([] { data::split_corpus("ab", 0.1); }), Contains("too short"));

  Generator gen(3);
  const NDArray windows = data::sample_windows(corpus.train, 50, 4, gen);
  REQUIRE(windows.shape() == Shape{50, 4});
  const auto w = windows.span<std::int64_t>();
  bool first_start = false, last_start = false;
  for (Index b = 0; b < 50; ++b) {  // consecutive ids of the text: 1 2 3 1 ...
    for (Index t = 1; t < 4; ++t) CHECK(w[b * 4 + t] == w[b * 4 + t - 1] % 3 + 1);
    first_start |= w[b * 4] == 1;
    last_start |= w[b * 4] == 3;
  }
  CHECK((first_start && last_start));
  CHECK_THAT(error_message([&] { data::sample_windows(corpus.validation, 2, 2, gen); }),
             Contains("length 2 from 1 ids"));
}

TEST_CASE("generated text: ASCII sentences, the same for the same seed", "[data]") {
  const std::string a = data::synthetic_text(2000, 7), b = data::synthetic_text(2000, 7);
  CHECK(a == b);
  CHECK(a.size() == 2000);
  CHECK(a != data::synthetic_text(2000, 8));
  CHECK(a.find(". ") != std::string::npos);
  CHECK(a.find('\n') != std::string::npos);
  CHECK(data::fold_to_ascii(a).text == a);
}
