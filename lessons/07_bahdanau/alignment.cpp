// Does attention look at the right place? Alignment accuracy on dates, and the heatmaps.
#include <algorithm>

#include "lessons/07_bahdanau/lesson.h"

namespace attend::lesson07 {

AlignmentScore alignment_accuracy(const std::vector<DateExample>& examples,
                                  const std::vector<std::vector<std::vector<double>>>& weights) {
  if (examples.size() != weights.size())
    fail("alignment_accuracy: {} examples and {} attention records", examples.size(),
         weights.size());
  AlignmentScore score;
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const DateExample& example = examples[e];
    for (std::size_t i = 0; i < example.source.size(); ++i) {
      const data::Span& span = example.source[i];
      if (span.empty()) continue;  // a '-': it comes from nowhere in the input
      ++score.digits;
      if (i >= weights[e].size()) continue;  // the model stopped before this digit
      const std::vector<double>& alpha = weights[e][i];
      // The first of equal maxima, like argmax.
      const auto most_attended = std::max_element(alpha.begin(), alpha.end()) - alpha.begin();
      score.hits += span.contains(static_cast<int>(most_attended));
    }
  }
  return score;
}

std::vector<Decoded> decode_dates(lesson06::Seq2SeqModel& model, const lesson06::DateTask& task,
                                  const std::vector<DateExample>& examples, Index batch_size) {
  constexpr Index kMaxLength = 12;  // as lesson06::predict_dates
  std::vector<Decoded> out;
  for (std::size_t start = 0; start < examples.size();
       start += static_cast<std::size_t>(batch_size)) {
    std::vector<std::size_t> rows;
    for (std::size_t i = start;
         i < examples.size() && i < start + static_cast<std::size_t>(batch_size); ++i)
      rows.push_back(i);
    Batch batch = lesson06::date_batch(task, examples, rows);
    for (Decoded& d : lesson06::greedy_decode(model, batch.source, batch.source_mask, kMaxLength))
      out.push_back(std::move(d));
  }
  return out;
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

NDArray attention_matrix(const Decoded& decoded, Index source_length) {
  const Index rows = static_cast<Index>(decoded.weights.size());
  if (rows == 0) fail("attention_matrix: the output has no recorded attention");
  NDArray matrix = NDArray::zeros({rows, source_length}, kFloat64);
  for (Index i = 0; i < rows; ++i) {
    const std::vector<double>& alpha = decoded.weights[static_cast<std::size_t>(i)];
    if (static_cast<Index>(alpha.size()) < source_length)
      fail("attention_matrix: {} weights in row {}, fewer than the {} source tokens", alpha.size(),
           i, source_length);
    for (Index j = 0; j < source_length; ++j)
      matrix.data<double>()[i * source_length + j] = alpha[static_cast<std::size_t>(j)];
  }
  return matrix;
}

}  // namespace attend::lesson07
