// The count models every language model must beat.
//
// Unigram: p(c) = (n(c) + 1) / (N + V), the characters' frequencies in the training text.
// Bigram:  p(c | b) = (n(b c) + 1) / (n(b) + V), the next character given the previous one.
// Add-one (Laplace) smoothing gives a character never seen (after b) a small probability
// instead of zero, so the validation loss stays finite.
#include <cmath>

#include "lesson.h"

namespace attend::lesson12 {

CountBaselines count_baselines(const std::vector<std::int64_t>& train,
                               const std::vector<std::int64_t>& validation, Index vocabulary) {
  const auto V = static_cast<std::size_t>(vocabulary);
  std::vector<double> unigram(V, 1.0);     // add-one
  std::vector<double> bigram(V * V, 1.0);  // [previous][next]
  std::vector<double> row_total(V, static_cast<double>(V));
  for (std::size_t i = 0; i < train.size(); ++i) {
    unigram[static_cast<std::size_t>(train[i])] += 1;
    if (i == 0) continue;
    const auto b = static_cast<std::size_t>(train[i - 1]), c = static_cast<std::size_t>(train[i]);
    bigram[b * V + c] += 1;
    row_total[b] += 1;
  }
  const double unigram_total = static_cast<double>(train.size() + V);
  CountBaselines nats;
  for (std::size_t i = 0; i < validation.size(); ++i) {
    const auto c = static_cast<std::size_t>(validation[i]);
    const double p_unigram = unigram[c] / unigram_total;
    nats.unigram -= std::log(p_unigram);
    if (i == 0) {
      nats.bigram -= std::log(p_unigram);
    } else {
      const auto b = static_cast<std::size_t>(validation[i - 1]);
      nats.bigram -= std::log(bigram[b * V + c] / row_total[b]);
    }
  }
  nats.unigram /= static_cast<double>(validation.size());
  nats.bigram /= static_cast<double>(validation.size());
  return nats;
}

}  // namespace attend::lesson12
