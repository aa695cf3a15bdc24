// German-English sentence pairs for the translation part of the Bahdanau lesson.
//
// The source is the Ding German-English dictionary (FreeDict build, Debian package
// dict-freedict-deu-eng), whose entries include thousands of short example sentences with
// human translations ("Mir ist eiskalt." -> "I'm freezing."). The reader keeps the entries
// whose headword and translation are both plain sentences: ending in . ! or ?, at least
// three German and two English words, no more than `max_words`, and without brackets,
// slashes, ellipses or quotes (about 8,000 pairs with max_words = 10).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attend::data {

struct SentencePair {
  std::string source;  // German
  std::string target;  // English
};

inline const std::string kFreedictFolder = "/usr/share/dictd";

bool freedict_available(const std::string& folder = kFreedictFolder);

// Throws attend::Error, saying what to install, if the dictionary is missing or unreadable.
std::vector<SentencePair> load_freedict_sentences(const std::string& folder = kFreedictFolder,
                                                  int max_words = 10);

struct TranslationSplits {
  std::vector<SentencePair> train, validation, test;
};
// Shuffles with `seed` and cuts off `validation` and `test` pairs; the rest is training data.
TranslationSplits split_pairs(std::vector<SentencePair> pairs, std::size_t validation,
                              std::size_t test, std::uint64_t seed);

// One parsed dictionary entry (exposed for tests): the headword line and the first
// translation line, or empty strings if the entry is not a clean sentence pair.
SentencePair parse_freedict_entry(const std::string& entry, int max_words);

}  // namespace attend::data
