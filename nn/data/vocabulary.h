// Vocabulary: the mapping between tokens (characters or words) and the integer ids a model
// sees. Four ids are reserved: <pad> fills short sequences up to the batch length, <bos>
// and <eos> mark the beginning and end of a target sequence, <unk> stands for any token
// the vocabulary does not know.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::data {

class Vocabulary {
 public:
  static constexpr std::int64_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

  Vocabulary();  // just the four special tokens
  // One token per character of `characters` (each added once, in order).
  static Vocabulary of_characters(std::string_view characters);

  std::int64_t add(const std::string& token);       // its id (the existing one if known)
  std::int64_t id(const std::string& token) const;  // kUnk if unknown
  bool contains(const std::string& token) const { return ids_.count(token) > 0; }
  const std::string& token(std::int64_t id) const;
  Index size() const { return static_cast<Index>(tokens_.size()); }

  // Characters to ids and back. decode stops at <eos> and skips <pad> and <bos>.
  std::vector<std::int64_t> encode_characters(std::string_view text) const;
  std::string decode_characters(const std::vector<std::int64_t>& ids) const;
  std::vector<std::int64_t> encode_words(const std::vector<std::string>& words) const;
  std::vector<std::string> decode_words(const std::vector<std::int64_t>& ids) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

// Sequences of ids stacked into an int64 [B, T] array, T = the longest length (or
// `length` if larger), short ones filled with <pad>.
NDArray pad_sequences(const std::vector<std::vector<std::int64_t>>& sequences, Index length = 0);

// Splits text at spaces and around punctuation (".,!?;:"), lower-cased:
// "Ich habe Hunger." -> {"ich", "habe", "hunger", "."}.
std::vector<std::string> split_words(std::string_view text);

}  // namespace attend::data
