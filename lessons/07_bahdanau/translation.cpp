// German-English sentence pairs as word ids, and translating them.
#include <algorithm>
#include <map>

#include "lesson.h"

namespace attend::lesson07 {
namespace {

std::vector<Words> split_all(const std::vector<data::SentencePair>& pairs, bool source) {
  std::vector<Words> out;
  for (const data::SentencePair& p : pairs)
    out.push_back(data::split_words(source ? p.source : p.target));
  return out;
}

}  // namespace

Vocabulary word_vocabulary(const std::vector<Words>& sentences, int min_count) {
  std::map<std::string, int> counts;  // alphabetical
  for (const Words& sentence : sentences)
    for (const std::string& word : sentence) ++counts[word];
  std::vector<std::pair<std::string, int>> kept;
  for (const auto& [word, count] : counts)
    if (count >= min_count) kept.emplace_back(word, count);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocabulary vocabulary;
  for (const auto& [word, count] : kept) vocabulary.add(word);
  return vocabulary;
}

TranslationTask make_translation_task(std::vector<data::SentencePair> pairs, std::size_t validation,
                                      std::size_t test, std::uint64_t seed, int min_count) {
  data::TranslationSplits splits = data::split_pairs(std::move(pairs), validation, test, seed);
  TranslationTask task;
  task.train_source = split_all(splits.train, true);
  task.train_target = split_all(splits.train, false);
  task.validation_source = split_all(splits.validation, true);
  task.validation_target = split_all(splits.validation, false);
  task.test_source = split_all(splits.test, true);
  task.test_target = split_all(splits.test, false);
  // Only the training sentences decide which words are known: a held-out sentence's rare
  // words are <unk>, as they would be for new text.
  task.source_vocabulary = word_vocabulary(task.train_source, min_count);
  task.target_vocabulary = word_vocabulary(task.train_target, min_count);
  return task;
}

Batch translation_batch(const TranslationTask& task, const std::vector<Words>& sources,
                        const std::vector<Words>& targets, const std::vector<std::size_t>& rows) {
  std::vector<TokenIds> source_ids, target_ids;
  for (std::size_t row : rows) {
    source_ids.push_back(task.source_vocabulary.encode_words(sources.at(row)));
    target_ids.push_back(task.target_vocabulary.encode_words(targets.at(row)));
  }
  return seq::make_batch(source_ids, target_ids);
}

double unknown_share(const Vocabulary& vocabulary, const std::vector<Words>& sentences) {
  Index words = 0, unknown = 0;
  for (const Words& sentence : sentences)
    for (const std::string& word : sentence) {
      ++words;
      unknown += !vocabulary.contains(word);
    }
  return words > 0 ? static_cast<double>(unknown) / static_cast<double>(words) : 0.0;
}

std::vector<Decoded> translate(seq::Seq2SeqModel& model, const TranslationTask& task,
                               const std::vector<Words>& sources, const seq::BeamOptions& beam) {
  constexpr std::size_t kGreedyBatch = 100;
  std::vector<Decoded> out;
  const std::vector<Words> no_targets(sources.size());
  for (std::size_t start = 0; start < sources.size(); start += kGreedyBatch) {
    std::vector<std::size_t> rows;
    for (std::size_t i = start; i < sources.size() && i < start + kGreedyBatch; ++i)
      rows.push_back(i);
    if (beam.width == 1) {
      Batch batch = translation_batch(task, sources, no_targets, rows);
      for (Decoded& d : seq::greedy_decode(model, batch.source, batch.source_mask, beam.max_length))
        out.push_back(std::move(d));
    } else {
      for (std::size_t row : rows) {
        Batch one = translation_batch(task, sources, no_targets, {row});
        out.push_back(seq::beam_search(model, one.source, one.source_mask, beam));
      }
    }
  }
  return out;
}

Words words_of(const Vocabulary& vocabulary, const TokenIds& tokens) {
  return vocabulary.decode_words(tokens);
}

}  // namespace attend::lesson07
