#include "nn/data/text_corpus.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "tensor/error.h"

namespace attend::data {

std::string austen_file() {
  const char* override_path = std::getenv("ATTEND_AUSTEN_FILE");
  return override_path != nullptr && *override_path != '\0' ? override_path : kAustenFile;
}

std::string read_text_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    fail("read_text_file: '{}' is a folder, not a file", path);
  errno = 0;
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fail("read_text_file: cannot open '{}': {}", path,
         std::system_category().message(errno != 0 ? errno : ENOENT));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad()) fail("read_text_file: cannot read '{}'", path);
  return bytes.str();
}

// ---- R's serialisation (XDR: big-endian), just what a character vector needs --------------

namespace {

// One zlib stream starting at `in`, inflated to its `expected` size; `consumed` is how many
// input bytes it took (the .rdb stores no compressed sizes: the next record starts there).
struct Inflated {
  std::string data;
  std::size_t consumed;
};
Inflated inflate_record(std::string_view in, std::size_t expected, const std::string& where) {
  // deflate shrinks data at most 1032-fold (zlib's FAQ): a length beyond that is a damaged
  // header, refused before it allocates up to 4 GB.
  if (expected / 1032 > in.size())
    fail("{}: the record announces {} bytes, more than its {} compressed bytes can hold", where,
         expected, in.size());
  std::string out(expected, '\0');
  z_stream z{};
  if (inflateInit(&z) != Z_OK) fail("{}: zlib inflateInit failed", where);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = inflate(&z, Z_FINISH);
  const std::size_t produced = z.total_out, consumed = z.total_in;
  inflateEnd(&z);
  if (status != Z_STREAM_END || produced != expected)
    fail("{}: damaged zlib stream (zlib status {}, {} of {} bytes)", where, status, produced,
         expected);
  return {std::move(out), consumed};
}

class XdrReader {
 public:
  XdrReader(std::string_view bytes, std::string where) : bytes_(bytes), where_(std::move(where)) {}
  std::int32_t int32() {
    need(4);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes_[pos_ + i]);
    pos_ += 4;
    return static_cast<std::int32_t>(v);
  }
  std::string bytes(std::size_t n) {
    need(n);
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  [[noreturn]] void bad(std::string_view what) const {
    fail("{}: {} at byte {}", where_, what, pos_);
  }

 private:
  void need(std::size_t n) const {
    if (n > bytes_.size() - pos_) bad("the data ends early");
  }
  std::string_view bytes_;
  std::string where_;
  std::size_t pos_ = 0;
};

constexpr int kCharSxp = 9, kStrSxp = 16;

// One serialised object that must be a character vector (R's STRSXP of CHARSXPs).
std::vector<std::string> parse_character_vector(std::string_view data, const std::string& where) {
  XdrReader r(data, where);
  if (r.bytes(2) != "X\n") r.bad("not R's XDR serialisation (no \"X\\n\")");
  const std::int32_t version = r.int32();
  r.int32();           // the R version that wrote it
  r.int32();           // the oldest R version that can read it
  if (version == 3) {  // the native encoding's name
    const std::int32_t length = r.int32();
    if (length < 0) r.bad("a negative length of the encoding name");
    r.bytes(static_cast<std::size_t>(length));
  }
  if ((r.int32() & 0xff) != kStrSxp) r.bad("the object is not a character vector");
  const std::int32_t count = r.int32();
  if (count < 0) r.bad("a negative vector length");
  // Each element takes at least 8 bytes: a larger count is a damaged header, not a reason to
  // reserve gigabytes.
  if (static_cast<std::size_t>(count) > data.size() / 8) r.bad("a vector longer than the data");
  std::vector<std::string> elements;
  elements.reserve(static_cast<std::size_t>(count));
  for (std::int32_t i = 0; i < count; ++i) {
    if ((r.int32() & 0xff) != kCharSxp) r.bad("an element that is not a string");
    const std::int32_t length = r.int32();  // -1 is NA, read as ""
    elements.push_back(length < 0 ? std::string() : r.bytes(static_cast<std::size_t>(length)));
  }
  return elements;
}

}  // namespace

std::vector<std::vector<std::string>> read_r_character_vectors(const std::string& path) {
  const std::string file = read_text_file(path);
  std::vector<std::vector<std::string>> vectors;
  std::size_t pos = 0;
  while (pos < file.size()) {
    const std::string where = fmt::format("read_r_character_vectors: '{}', record {} (byte {})",
                                          path, vectors.size(), pos);
    if (pos + 4 > file.size()) fail("{}: the file ends inside a record header", where);
    std::size_t length = 0;
    for (int i = 0; i < 4; ++i) length = (length << 8) | static_cast<unsigned char>(file[pos + i]);
    const Inflated record = inflate_record(std::string_view(file).substr(pos + 4), length, where);
    vectors.push_back(parse_character_vector(record.data, where));
    pos += 4 + record.consumed;
  }
  if (vectors.empty()) fail("read_r_character_vectors: '{}' is empty", path);
  return vectors;
}

}  // namespace attend::data

namespace attend::data {

// ---- The novels ------------------------------------------------------------------------------

std::string read_austen_novels(const std::string& path) {
  if (!std::ifstream(path))
    fail(
        "read_austen_novels: '{}' is missing. Install Jane Austen's novels with "
        "scripts/install_book.sh (1.6 MB, no root needed), or run with --synthetic",
        path);
  const std::vector<std::vector<std::string>> books = read_r_character_vectors(path);
  // The .rdb holds them by R name (emma, mansfieldpark, ...); each starts with its title.
  static const std::array<const char*, 6> kPublicationOrder = {
      "SENSE AND SENSIBILITY", "PRIDE AND PREJUDICE", "MANSFIELD PARK", "EMMA",
      "NORTHANGER ABBEY",      "PERSUASION"};
  std::string text;
  for (const char* title : kPublicationOrder) {
    auto same_title = [&](const std::vector<std::string>& book) {
      if (book.empty()) return false;
      std::string first = book.front();
      std::transform(first.begin(), first.end(), first.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      return first == title;
    };
    auto book = std::find_if(books.begin(), books.end(), same_title);
    if (book == books.end())
      fail("read_austen_novels: '{}' has no novel titled \"{}\" (is it janeaustenr's Rdata.rdb?)",
           path, title);
    if (!text.empty()) text += '\n';
    for (const std::string& line : *book) text += line + '\n';
  }
  return text;
}

// ---- Unicode to ASCII -----------------------------------------------------------------------

const std::vector<Folding>& ascii_folding_table() {
  static const std::vector<Folding> table = {
      {"\u2018", "'"},  {"\u2019", "'"},  {"\u201A", "'"},   {"\u201B", "'"},   // single quotes
      {"\u00B4", "'"},  {"\u201C", "\""}, {"\u201D", "\""},  {"\u201E", "\""},  // double quotes
      {"\u00AB", "\""}, {"\u00BB", "\""},                                       // guillemets
      {"\u2014", "--"}, {"\u2015", "--"}, {"\u2013", "-"},   {"\u2010", "-"},   // dashes
      {"\u2011", "-"},  {"\u2012", "-"},  {"\u2026", "..."},                    // ellipsis
      {"\u00A0", " "},                                                          // no-break space
      {"\u00E0", "a"},  {"\u00E1", "a"},  {"\u00E2", "a"},   {"\u00E4", "a"},  {"\u00E5", "a"},
      {"\u00E7", "c"},  {"\u00E8", "e"},  {"\u00E9", "e"},   {"\u00EA", "e"},  {"\u00EB", "e"},
      {"\u00EC", "i"},  {"\u00ED", "i"},  {"\u00EE", "i"},   {"\u00EF", "i"},  {"\u00F1", "n"},
      {"\u00F2", "o"},  {"\u00F3", "o"},  {"\u00F4", "o"},   {"\u00F6", "o"},  {"\u00F9", "u"},
      {"\u00FA", "u"},  {"\u00FB", "u"},  {"\u00FC", "u"},   {"\u00C0", "A"},  {"\u00C9", "E"},
      {"\u00C8", "E"},  {"\u00C7", "C"},  {"\u00E6", "ae"},  {"\u00C6", "AE"}, {"\u0153", "oe"},
      {"\u0152", "OE"},
  };
  return table;
}

namespace {

// The length of the UTF-8 sequence that starts with byte b, or 0 if b cannot start one.
int utf8_length(unsigned char b) {
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 0;
}

}  // namespace

FoldedText fold_to_ascii(std::string_view utf8) {
  static const std::map<std::string, std::string> table = [] {
    std::map<std::string, std::string> m;
    for (const Folding& f : ascii_folding_table()) m[f.from] = f.to;
    return m;
  }();
  FoldedText out;
  out.text.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) {
    const auto b = static_cast<unsigned char>(utf8[i]);
    const int n = utf8_length(b);
    bool valid = n > 0 && i + static_cast<std::size_t>(n) <= utf8.size();
    for (int k = 1; valid && k < n; ++k)
      valid = (static_cast<unsigned char>(utf8[i + static_cast<std::size_t>(k)]) & 0xC0) == 0x80;
    if (!valid) {
      ++out.malformed;
      ++i;
      continue;
    }
    const std::string c(utf8.substr(i, static_cast<std::size_t>(n)));
    i += static_cast<std::size_t>(n);
    if (c == "\t") {
      out.text += ' ';
      ++out.mapped[c];
    } else if (n == 1 && (b >= 0x20 || c == "\n") && b != 0x7F) {
      out.text += c;
    } else if (auto it = table.find(c); it != table.end()) {
      out.text += it->second;
      ++out.mapped[c];
    } else {
      ++out.dropped[c];
    }
  }
  return out;
}

// ---- Vocabulary, split, windows --------------------------------------------------------------

CharVocabulary::CharVocabulary(std::string_view text) {
  std::array<bool, 256> seen{};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::fill(std::begin(ids_), std::end(ids_), std::int16_t{-1});
  for (int b = 0; b < 256; ++b)
    if (seen[static_cast<std::size_t>(b)]) {
      ids_[b] = static_cast<std::int16_t>(chars_.size());
      chars_ += static_cast<char>(b);
    }
}

std::int64_t CharVocabulary::id(char c) const {
  const std::int16_t i = ids_[static_cast<unsigned char>(c)];
  if (chars_.empty() || i < 0)
    fail("CharVocabulary: character {:?} (byte {}) is not in the vocabulary of {} characters",
         std::string(1, c), static_cast<int>(static_cast<unsigned char>(c)), chars_.size());
  return i;
}

char CharVocabulary::character(std::int64_t id) const {
  if (id < 0 || id >= size())
    fail("CharVocabulary: id {} is outside the vocabulary of {} characters", id, size());
  return chars_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> CharVocabulary::encode(std::string_view text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(id(c));
  return ids;
}

std::string CharVocabulary::decode(std::span<const std::int64_t> ids) const {
  std::string text;
  text.reserve(ids.size());
  for (std::int64_t i : ids) text += character(i);
  return text;
}

CharCorpus split_corpus(std::string_view text, double train_fraction) {
  if (!(train_fraction > 0 && train_fraction < 1))
    fail("split_corpus: train_fraction {} must be strictly between 0 and 1", train_fraction);
  const auto cut = static_cast<std::size_t>(train_fraction * static_cast<double>(text.size()));
  if (cut == 0 || cut == text.size())
    fail("split_corpus: a text of {} characters is too short to split {:g}/{:g}", text.size(),
         train_fraction, 1 - train_fraction);
  CharCorpus corpus;
  corpus.vocabulary = CharVocabulary(text);
  corpus.train = corpus.vocabulary.encode(text.substr(0, cut));
  corpus.validation = corpus.vocabulary.encode(text.substr(cut));
  return corpus;
}

NDArray sample_windows(std::span<const std::int64_t> ids, Index batch, Index length,
                       Generator& gen) {
  if (batch < 1 || length < 1 || static_cast<Index>(ids.size()) < length)
    fail("sample_windows: {} windows of length {} from {} ids", batch, length, ids.size());
  NDArray windows = NDArray::empty({batch, length}, kInt64);
  std::int64_t* out = windows.data<std::int64_t>();
  const Index starts = static_cast<Index>(ids.size()) - length + 1;
  for (Index b = 0; b < batch; ++b) {
    const auto start = static_cast<std::size_t>(gen.randint(starts));
    std::copy_n(ids.begin() + static_cast<std::ptrdiff_t>(start), length, out + b * length);
  }
  return windows;
}

// ---- Generated text ------------------------------------------------------------------------

std::string synthetic_text(Index chars, std::uint64_t seed) {
  static const std::vector<std::string> kDeterminers = {"the", "a", "every", "this", "no"},
                                        kAdjectives = {"old",   "white", "quiet", "great",
                                                       "small", "dark",  "young", "strange"},
                                        kNouns = {"whale",  "ship",    "captain", "sea",
                                                  "sailor", "harpoon", "island",  "storm",
                                                  "letter", "lady"},
                                        kVerbs = {"saw",    "followed", "remembered", "found",
                                                  "feared", "loved",    "carried",    "watched"},
                                        kPlaces = {"near", "behind", "beyond", "under", "beside"};
  Generator gen(seed);
  auto pick = [&](const std::vector<std::string>& words) {
    return words[static_cast<std::size_t>(gen.randint(static_cast<Index>(words.size())))];
  };
  auto noun_phrase = [&] {
    std::string phrase = pick(kDeterminers) + " ";
    if (gen.bernoulli(0.5)) phrase += pick(kAdjectives) + " ";
    return phrase + pick(kNouns);
  };
  std::string text, line;
  while (static_cast<Index>(text.size() + line.size()) < chars) {
    std::string sentence = noun_phrase() + " " + pick(kVerbs) + " " + noun_phrase();
    if (gen.bernoulli(0.4)) sentence += ", " + pick(kPlaces) + " " + noun_phrase();
    sentence += gen.bernoulli(0.2) ? "!" : ".";
    sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
    if (line.size() + sentence.size() > 70) {  // wrapped like a Gutenberg text
      text += line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + sentence;
  }
  text += line + '\n';
  return text.substr(0, static_cast<std::size_t>(std::max<Index>(chars, 0)));
}

}  // namespace attend::data
