#include "nn/data/translation.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "tensor/error.h"
#include "tensor/random.h"

namespace attend::data {
namespace {

const std::string kIndexFile = "freedict-deu-eng.index";
const std::string kDictFile = "freedict-deu-eng.dict.dz";

[[noreturn]] void missing(const std::string& folder, const std::string& what) {
  fail(
      "German-English sentences: {} in '{}'. Install the dictionary with `sudo apt-get install "
      "dict-freedict-deu-eng` (or run scripts/setup.sh)",
      what, folder);
}

// dictd writes offsets and lengths in base 64 with the alphabet A-Z a-z 0-9 + /. Errors name
// the index file.
std::int64_t decode_base64_number(const std::string& text, const std::string& index_path) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.empty()) fail("German-English sentences: '{}' has an empty number", index_path);
  std::int64_t value = 0;
  for (char c : text) {
    const std::size_t digit = kAlphabet.find(c);
    if (digit == std::string::npos)
      fail("German-English sentences: '{}': '{}' is not a base-64 number", index_path, text);
    if (value > (std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(digit)) / 64)
      fail("German-English sentences: '{}': the number '{}' does not fit in 64 bits", index_path,
           text);
    value = value * 64 + static_cast<std::int64_t>(digit);
  }
  return value;
}

// The whole decompressed dictionary (dictzip is gzip-compatible), about 100 MB.
std::string read_dictionary(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) fail("German-English sentences: cannot open '{}'", path);
  std::string text;
  std::vector<char> chunk(1 << 20);
  int n;
  while ((n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0)
    text.append(chunk.data(), static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(file);
  if (failed) fail("German-English sentences: '{}' is corrupt (gzip error)", path);
  return text;
}

std::string trim(const std::string& s) {
  const std::size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const std::size_t last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

int word_count(const std::string& s) {
  std::istringstream in(s);
  std::string w;
  int n = 0;
  while (in >> w) ++n;
  return n;
}

bool is_clean_sentence(const std::string& s, int min_words, int max_words) {
  if (s.empty()) return false;
  const char last = s.back();
  if (last != '.' && last != '!' && last != '?') return false;
  for (const char* bad : {"\xE2\x80\xA6", "...", "(", "[", "/", ";", "{", "<", "\""})
    if (s.find(bad) != std::string::npos) return false;
  const int words = word_count(s);
  return words >= min_words && words <= max_words;
}

}  // namespace

SentencePair parse_freedict_entry(const std::string& entry, int max_words) {
  std::istringstream lines(entry);
  std::string head, translation;
  if (!std::getline(lines, head) || !std::getline(lines, translation)) return {};
  // "Mir ist eiskalt. /miːɾ ɪst ˈaɪskalt/": drop the pronunciation and any "<pos>" tag.
  head = trim(head.substr(0, std::min(head.find(" /"), head.find(" <"))));
  // " [geh.] I'm freezing.": drop usage tags; keep the first of several alternatives
  // ("Hello., Hi." -> "Hello.").
  translation = trim(translation);
  while (!translation.empty() && translation[0] == '[') {
    const std::size_t close = translation.find(']');
    if (close == std::string::npos) return {};
    translation = trim(translation.substr(close + 1));
  }
  for (const char* separator : {"., ", "!, ", "?, "}) {
    const std::size_t at = translation.find(separator);
    if (at != std::string::npos) translation = translation.substr(0, at + 1);
  }
  // At least three German words (a sentence, not a phrase); English may be shorter
  // ("Mir ist eiskalt." -> "I'm freezing.").
  if (!is_clean_sentence(head, 3, max_words) || !is_clean_sentence(translation, 2, max_words))
    return {};
  return {head, translation};
}

bool freedict_available(const std::string& folder) {
  return std::filesystem::exists(std::filesystem::path(folder) / kIndexFile) &&
         std::filesystem::exists(std::filesystem::path(folder) / kDictFile);
}

std::vector<SentencePair> load_freedict_sentences(const std::string& folder, int max_words) {
  const std::filesystem::path dir(folder);
  if (!freedict_available(folder)) missing(folder, kIndexFile + " or " + kDictFile + " not found");
  const std::string index_path = (dir / kIndexFile).string();
  std::ifstream index(index_path);
  if (!index) missing(folder, "cannot read " + kIndexFile);
  const std::string text = read_dictionary((dir / kDictFile).string());

  std::vector<SentencePair> pairs;
  std::set<std::pair<std::int64_t, std::int64_t>> seen_entries;
  std::set<std::string> seen_sources;
  std::string line;
  while (std::getline(index, line)) {
    // "headword \t offset \t length" (the headword is lower-cased; the entry has the original).
    const std::size_t tab1 = line.find('\t'), tab2 = line.rfind('\t');
    if (tab1 == std::string::npos || tab2 == tab1) continue;
    const std::int64_t offset =
        decode_base64_number(line.substr(tab1 + 1, tab2 - tab1 - 1), index_path);
    const std::int64_t length = decode_base64_number(line.substr(tab2 + 1), index_path);
    const auto size = static_cast<std::int64_t>(text.size());
    if (length <= 0 || offset > size || length > size - offset)
      fail(
          "German-English sentences: '{}' points outside the dictionary (entry '{}'); the files "
          "do not belong together or are corrupt",
          index_path, line.substr(0, tab1));
    if (!seen_entries.insert({offset, length}).second) continue;
    SentencePair pair = parse_freedict_entry(
        text.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length)), max_words);
    if (pair.source.empty() || !seen_sources.insert(pair.source).second) continue;
    pairs.push_back(std::move(pair));
  }
  if (pairs.empty()) missing(folder, "no sentence pairs found");
  return pairs;
}

TranslationSplits split_pairs(std::vector<SentencePair> pairs, std::size_t validation,
                              std::size_t test, std::uint64_t seed) {
  if (validation + test >= pairs.size())
    fail("split_pairs: {} validation + {} test pairs leave nothing to train on ({} pairs)",
         validation, test, pairs.size());
  Generator gen(seed);
  std::vector<Index> order = gen.permutation(static_cast<Index>(pairs.size()));
  TranslationSplits splits;
  for (std::size_t i = 0; i < order.size(); ++i) {
    SentencePair& p = pairs[static_cast<std::size_t>(order[i])];
    if (i < validation)
      splits.validation.push_back(std::move(p));
    else if (i < validation + test)
      splits.test.push_back(std::move(p));
    else
      splits.train.push_back(std::move(p));
  }
  return splits;
}

}  // namespace attend::data
