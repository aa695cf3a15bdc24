// Scoring decoded dates: exact match, overall, by input length and by format; heatmap labels.
#include "seq/date_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "tensor/error.h"

namespace attend::seq {

using data::DateExample;
using data::Vocabulary;

std::vector<Decoded> decode_dates(Seq2SeqModel& model, const DateTask& task,
                                  const std::vector<DateExample>& examples, Index batch_size) {
  std::vector<Decoded> out;
  for (std::size_t start = 0; start < examples.size();
       start += static_cast<std::size_t>(batch_size)) {
    std::vector<std::size_t> rows;
    for (std::size_t i = start;
         i < examples.size() && i < start + static_cast<std::size_t>(batch_size); ++i)
      rows.push_back(i);
    Batch batch = date_batch(task, examples, rows);
    for (Decoded& d : greedy_decode(model, batch.source, batch.source_mask, kMaxDateLength))
      out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> date_strings(const DateTask& task, const std::vector<Decoded>& decoded) {
  std::vector<std::string> strings;
  for (const Decoded& d : decoded)
    strings.push_back(task.target_vocabulary.decode_characters(d.tokens));
  return strings;
}

std::vector<std::string> predict_dates(Seq2SeqModel& model, const DateTask& task,
                                       const std::vector<DateExample>& examples, Index batch_size) {
  return date_strings(task, decode_dates(model, task, examples, batch_size));
}

double exact_match(const std::vector<DateExample>& examples,
                   const std::vector<std::string>& predictions) {
  if (examples.empty() || examples.size() != predictions.size())
    fail("exact_match: {} examples and {} predictions", examples.size(), predictions.size());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < examples.size(); ++i) correct += predictions[i] == examples[i].output;
  return static_cast<double>(correct) / static_cast<double>(examples.size());
}

BeamComparison compare_beam_with_greedy(Seq2SeqModel& model, const DateTask& task,
                                        const std::vector<DateExample>& examples,
                                        const std::vector<Decoded>& greedy, std::size_t count,
                                        const BeamOptions& beam, std::size_t checks) {
  if (greedy.size() != examples.size())
    fail("compare_beam_with_greedy: {} examples and {} greedy outputs", examples.size(),
         greedy.size());
  BeamComparison result;
  result.dates = std::min(examples.size(), count);
  std::vector<std::string> beamed;
  for (std::size_t i = 0; i < result.dates; ++i) {
    const Batch one = date_batch(task, examples, {i});
    const Decoded d = beam_search(model, one.source, one.source_mask, beam);
    beamed.push_back(task.target_vocabulary.decode_characters(d.tokens));
    if (i < checks) {
      const Decoded narrow = beam_search(model, one.source, one.source_mask,
                                         {.width = 1, .max_length = beam.max_length});
      result.width_one_same += narrow.tokens == greedy[i].tokens;
      ++result.width_one_checked;
    }
  }
  if (result.dates > 0) {
    const auto end = static_cast<std::ptrdiff_t>(result.dates);
    const std::vector<DateExample> subset(examples.begin(), examples.begin() + end);
    result.greedy_exact_match = exact_match(
        subset, date_strings(task, std::vector<Decoded>(greedy.begin(), greedy.begin() + end)));
    result.beam_exact_match = exact_match(subset, beamed);
  }
  return result;
}

std::vector<LengthBucket> accuracy_by_length(const std::vector<DateExample>& examples,
                                             const std::vector<std::string>& predictions) {
  if (examples.size() != predictions.size())
    fail("accuracy_by_length: {} examples and {} predictions", examples.size(), predictions.size());
  std::map<int, LengthBucket> buckets;  // by first length, so in order
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const int length = static_cast<int>(examples[i].input.size());
    const int low = length < kShortestDate
                        ? length
                        : kShortestDate + (length - kShortestDate) / kBucketWidth * kBucketWidth;
    LengthBucket& b = buckets[low];
    b.low = low;
    b.high = length < kShortestDate ? length : low + kBucketWidth - 1;
    ++b.count;
    b.correct += predictions[i] == examples[i].output;
  }
  std::vector<LengthBucket> out;
  for (const auto& [low, bucket] : buckets) out.push_back(bucket);
  return out;
}

std::vector<FormatScore> accuracy_by_format(const std::vector<DateExample>& examples,
                                            const std::vector<std::string>& predictions) {
  if (examples.size() != predictions.size())
    fail("accuracy_by_format: {} examples and {} predictions", examples.size(), predictions.size());
  std::vector<FormatScore> scores(data::kDateFormats);
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const int format = examples[i].format;
    if (format < 0 || format >= data::kDateFormats)
      fail("accuracy_by_format: example {} has format {}, not one of 0..{}", i, format,
           data::kDateFormats - 1);
    FormatScore& s = scores[static_cast<std::size_t>(format)];
    ++s.count;
    s.correct += predictions[i] == examples[i].output;
  }
  return scores;
}

void write_length_curve(const std::string& path, const std::vector<LengthBucket>& buckets) {
  std::ofstream csv(path);
  csv << "low,high,count,correct,accuracy\n";
  for (const LengthBucket& b : buckets)
    csv << fmt::format("{},{},{},{},{}\n", b.low, b.high, b.count, b.correct, b.accuracy());
  if (!csv) fail("write_length_curve: cannot write the accuracy curve to '{}'", path);
}

std::vector<LengthBucket> read_length_curve(const std::string& path) {
  errno = 0;
  std::ifstream csv(path);
  if (!csv)
    fail("read_length_curve: cannot open '{}': {}", path,
         std::system_category().message(errno != 0 ? errno : ENOENT));
  std::string line;
  std::getline(csv, line);
  if (line != "low,high,count,correct,accuracy")
    fail("read_length_curve: '{}' is not an accuracy curve: its header is {:?}", path,
         line.substr(0, 60));
  std::vector<LengthBucket> buckets;
  for (int number = 2; std::getline(csv, line); ++number) {
    std::istringstream fields(line);
    LengthBucket b;
    char c1 = 0, c2 = 0, c3 = 0;
    if (!(fields >> b.low >> c1 >> b.high >> c2 >> b.count >> c3 >> b.correct) || c1 != ',' ||
        c2 != ',' || c3 != ',' || b.low < 0 || b.high < b.low || b.count < 1 || b.correct < 0 ||
        b.correct > b.count)
      fail("read_length_curve: '{}' line {}: {:?} is not low,high,count,correct,accuracy", path,
           number, line.substr(0, 60));
    buckets.push_back(b);
  }
  if (buckets.empty()) fail("read_length_curve: '{}' has no rows", path);
  return buckets;
}

double bucket_middle(const LengthBucket& bucket) {
  return (static_cast<double>(bucket.low) + bucket.high) / 2.0;  // (int + int can overflow)
}

std::vector<std::string> character_labels(const std::string& text) {
  std::vector<std::string> labels;
  for (char c : text) labels.push_back(c == ' ' ? "_" : std::string(1, c));
  return labels;
}

std::vector<std::string> output_labels(const Vocabulary& vocabulary, const Decoded& decoded) {
  std::vector<std::string> labels;
  for (std::int64_t id : decoded.tokens) {
    const std::string& token = vocabulary.token(id);
    labels.push_back(token == " " ? "_" : token);
  }
  if (decoded.finished) labels.push_back("<eos>");
  return labels;
}

std::vector<std::size_t> first_date_of_each_format(const std::vector<data::DateExample>& dates) {
  std::vector<bool> seen(data::kDateFormats, false);
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < dates.size(); ++i) {
    const auto format = static_cast<std::size_t>(dates[i].format);
    if (seen[format]) continue;
    seen[format] = true;
    first.push_back(i);
  }
  return first;
}

viz::AttentionExample date_attention_example(const Vocabulary& target_vocabulary,
                                             const data::DateExample& example,
                                             const Decoded& decoded) {
  viz::AttentionExample e{.name = example.input,
                          .source = character_labels(example.input),
                          .target = output_labels(target_vocabulary, decoded)};
  if (target_vocabulary.decode_characters(decoded.tokens) != example.output) return e;
  const auto& truth = example.source;  // one span per output character
  for (std::size_t k = 0; k < truth.size(); ++k) {
    if (truth[k].empty()) continue;  // a '-' comes from nowhere
    if (k > 0 && truth[k - 1].begin == truth[k].begin && !e.spans.empty()) {
      e.spans.back().target_end = static_cast<int>(k) + 1;  // the same year, month or day
      continue;
    }
    e.spans.push_back({.target_begin = static_cast<int>(k),
                       .target_end = static_cast<int>(k) + 1,
                       .source_begin = truth[k].begin,
                       .source_end = truth[k].end});
  }
  return e;
}

}  // namespace attend::seq
