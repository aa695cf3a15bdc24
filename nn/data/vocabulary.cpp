#include "nn/data/vocabulary.h"

#include <algorithm>
#include <cctype>

#include "tensor/error.h"

namespace attend::data {

Vocabulary::Vocabulary() {
  for (const char* special : {"<pad>", "<bos>", "<eos>", "<unk>"}) add(special);
}

Vocabulary Vocabulary::of_characters(std::string_view characters) {
  Vocabulary v;
  for (char c : characters) v.add(std::string(1, c));
  return v;
}

std::int64_t Vocabulary::add(const std::string& token) {
  auto [it, inserted] = ids_.try_emplace(token, static_cast<std::int64_t>(tokens_.size()));
  if (inserted) tokens_.push_back(token);
  return it->second;
}

std::int64_t Vocabulary::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::token(std::int64_t id) const {
  if (id < 0 || id >= size()) fail("vocabulary: id {} is not in 0..{}", id, size() - 1);
  return tokens_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> Vocabulary::encode_characters(std::string_view text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(id(std::string(1, c)));
  return ids;
}

std::string Vocabulary::decode_characters(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (std::int64_t i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    text += token(i);
  }
  return text;
}

std::vector<std::int64_t> Vocabulary::encode_words(const std::vector<std::string>& words) const {
  std::vector<std::int64_t> ids;
  ids.reserve(words.size());
  for (const std::string& w : words) ids.push_back(id(w));
  return ids;
}

std::vector<std::string> Vocabulary::decode_words(const std::vector<std::int64_t>& ids) const {
  std::vector<std::string> words;
  for (std::int64_t i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    words.push_back(token(i));
  }
  return words;
}

NDArray pad_sequences(const std::vector<std::vector<std::int64_t>>& sequences, Index length) {
  Index longest = length;
  for (const auto& s : sequences) longest = std::max<Index>(longest, static_cast<Index>(s.size()));
  NDArray out = NDArray::full({static_cast<Index>(sequences.size()), longest},
                              static_cast<double>(Vocabulary::kPad), kInt64);
  std::int64_t* p = out.data<std::int64_t>();
  for (std::size_t b = 0; b < sequences.size(); ++b)
    std::copy(sequences[b].begin(), sequences[b].end(), p + static_cast<Index>(b) * longest);
  return out;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) words.push_back(current);
    current.clear();
  };
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u)) {
      flush();
    } else if (std::string_view(".,!?;:\"").find(c) != std::string_view::npos) {
      flush();
      words.emplace_back(1, c);
    } else {
      current += static_cast<char>(u < 128 ? std::tolower(u) : u);  // UTF-8 bytes unchanged
    }
  }
  flush();
  return words;
}

}  // namespace attend::data
