// Text for character-level language models: a book read from disk, its Unicode punctuation
// folded to ASCII, a character vocabulary, the split into training and validation text, and
// random windows to train on (next-character prediction).
//
// The default book is Jane Austen's six novels as Debian's r-cran-janeaustenr ships them:
// R's "lazy-load database" data/Rdata.rdb, six records, each a 4-byte big-endian length and
// a zlib stream holding one R-serialised character vector (one element per line of the
// Gutenberg text). scripts/install_book.sh copies that one file to data/austen/Rdata.rdb.
// Any UTF-8 text file can be read instead (read_text_file), Moby-Dick for example.
//
//   std::string text = fold_to_ascii(read_austen_novels(path)).text;
//   CharCorpus corpus = split_corpus(text, 0.9);          // first 90% train, last 10% validation
//   NDArray windows = sample_windows(corpus.train, 32, 65, gen);   // int64 [32, 65]
//   // inputs = windows[:, :64], targets = windows[:, 1:]
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/ndarray.h"
#include "tensor/random.h"

namespace attend::data {

// Where lessons look for the novels by default (relative to the repository root, where the
// programs are run from); the environment variable ATTEND_AUSTEN_FILE overrides it.
inline constexpr const char* kAustenFile = "data/austen/Rdata.rdb";
std::string austen_file();  // ATTEND_AUSTEN_FILE if set, else kAustenFile

// The elements of every character vector stored in an R lazy-load database (.rdb), one
// vector per record, in file order. Throws attend::Error naming the file, the record and the
// byte offset if the file is not such a database (wrong magic, a damaged zlib stream, an
// object that is not a character vector).
std::vector<std::vector<std::string>> read_r_character_vectors(const std::string& path);

// The six novels in publication order (Sense and Sensibility, Pride and Prejudice, Mansfield
// Park, Emma, Northanger Abbey, Persuasion), each line ending in '\n' and one blank line
// between novels: UTF-8, 3.95 MB. The last 10% is most of Persuasion. Throws attend::Error
// saying how to install the file when it is missing.
std::string read_austen_novels(const std::string& path = austen_file());

// A whole file as bytes; throws attend::Error naming the path if it cannot be read.
std::string read_text_file(const std::string& path);

// Unicode punctuation folded to ASCII, so that the vocabulary is the ~80 printable ASCII
// characters a learner can type. The table (ascii_folding_table) maps curly quotes to ' and ",
// dashes to - (en dash) and -- (em dash, the Gutenberg convention), the ellipsis to ..., the
// no-break space to a space, and accented Latin letters to their base letter (é -> e).
// Carriage returns are dropped and tabs become spaces; any other non-ASCII character is
// dropped and counted.
struct FoldedText {
  std::string text;                      // ASCII only
  std::map<std::string, Index> mapped;   // UTF-8 character -> times it was replaced
  std::map<std::string, Index> dropped;  // UTF-8 character (or "\r") -> times dropped
  Index malformed = 0;                   // bytes that were not valid UTF-8 (dropped)
};
FoldedText fold_to_ascii(std::string_view utf8);
struct Folding {
  const char* from;  // UTF-8
  const char* to;    // ASCII
};
const std::vector<Folding>& ascii_folding_table();

// The characters of a text as ids 0..size-1, in byte order (so '\n' < ' ' < 'A' < 'a').
class CharVocabulary {
 public:
  CharVocabulary() = default;
  explicit CharVocabulary(std::string_view text);  // every distinct byte of text

  Index size() const { return static_cast<Index>(chars_.size()); }
  bool contains(char c) const { return ids_[static_cast<unsigned char>(c)] >= 0; }
  std::int64_t id(char c) const;  // throws attend::Error for a character not in the vocabulary
  char character(std::int64_t id) const;
  const std::string& characters() const { return chars_; }

  std::vector<std::int64_t> encode(std::string_view text) const;
  std::string decode(std::span<const std::int64_t> ids) const;

 private:
  std::string chars_;
  std::int16_t ids_[256] = {};  // -1: not in the vocabulary (filled by the constructor)
};

// A text as ids, cut in two: the first `train_fraction` for training, the rest (the end of
// the book, never seen in training) for validation. The vocabulary is the whole text's.
struct CharCorpus {
  CharVocabulary vocabulary;
  std::vector<std::int64_t> train, validation;
};
CharCorpus split_corpus(std::string_view text, double train_fraction = 0.9);

// `batch` windows of `length` consecutive ids starting at random positions of `ids`: int64
// [batch, length]. With length = T + 1, columns 0..T-1 are a model's inputs and 1..T its
// targets. Throws attend::Error if ids is shorter than length.
NDArray sample_windows(std::span<const std::int64_t> ids, Index batch, Index length,
                       Generator& gen);

// Generated English-like text for runs without the book (and for tests): sentences of a small
// grammar ("the old whale saw a ship near the sea."), with capitals, commas and line breaks,
// about `chars` characters long. The same seed gives the same text.
std::string synthetic_text(Index chars, std::uint64_t seed);

}  // namespace attend::data
