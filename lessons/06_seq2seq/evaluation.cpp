// Scoring decoded dates: exact match, overall and by input length.
#include <fstream>
#include <map>
#include <sstream>

#include "lessons/06_seq2seq/lesson.h"

namespace attend::lesson06 {

std::vector<std::string> predict_dates(Seq2SeqModel& model, const DateTask& task,
                                       const std::vector<DateExample>& examples, Index batch_size) {
  // "yyyy-mm-dd" and <eos>, plus one: a longer output is wrong, and cut there.
  constexpr Index kMaxLength = 12;
  std::vector<std::string> predictions;
  for (std::size_t start = 0; start < examples.size();
       start += static_cast<std::size_t>(batch_size)) {
    std::vector<std::size_t> rows;
    for (std::size_t i = start;
         i < examples.size() && i < start + static_cast<std::size_t>(batch_size); ++i)
      rows.push_back(i);
    Batch batch = date_batch(task, examples, rows);
    for (const Decoded& d : greedy_decode(model, batch.source, batch.source_mask, kMaxLength))
      predictions.push_back(task.target_vocabulary.decode_characters(d.tokens));
  }
  return predictions;
}

double exact_match(const std::vector<DateExample>& examples,
                   const std::vector<std::string>& predictions) {
  if (examples.empty() || examples.size() != predictions.size())
    fail("exact_match: {} examples and {} predictions", examples.size(), predictions.size());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < examples.size(); ++i) correct += predictions[i] == examples[i].output;
  return static_cast<double>(correct) / static_cast<double>(examples.size());
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
    FormatScore& s = scores.at(static_cast<std::size_t>(examples[i].format));
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
  if (!csv) fail("cannot write the accuracy curve to '{}'", path);
}

std::vector<LengthBucket> read_length_curve(const std::string& path) {
  std::ifstream csv(path);
  if (!csv) fail("cannot read '{}'", path);
  std::string line;
  std::getline(csv, line);
  if (line != "low,high,count,correct,accuracy")
    fail("'{}' is not an accuracy curve: its header is '{}'", path, line);
  std::vector<LengthBucket> buckets;
  for (int number = 2; std::getline(csv, line); ++number) {
    std::istringstream fields(line);
    LengthBucket b;
    char c1 = 0, c2 = 0, c3 = 0;
    if (!(fields >> b.low >> c1 >> b.high >> c2 >> b.count >> c3 >> b.correct) || c1 != ',' ||
        c2 != ',' || c3 != ',' || b.count < 1 || b.correct < 0 || b.correct > b.count)
      fail("'{}' line {}: '{}' is not low,high,count,correct,accuracy", path, number, line);
    buckets.push_back(b);
  }
  if (buckets.empty()) fail("'{}' has no rows", path);
  return buckets;
}

double bucket_middle(const LengthBucket& bucket) {
  return (bucket.low + bucket.high) / 2.0;
}

}  // namespace attend::lesson06
