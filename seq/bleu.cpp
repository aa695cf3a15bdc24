// BLEU (Papineni et al. 2002): clipped n-gram precisions and the brevity penalty.
#include <algorithm>
#include <cmath>
#include <map>

#include "seq/bleu.h"

#include "tensor/error.h"

namespace attend::seq {
namespace {

// How often each n-gram of length n occurs in the sentence.
std::map<Words, Index> ngram_counts(const Words& sentence, int n) {
  std::map<Words, Index> counts;
  for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= sentence.size(); ++i)
    ++counts[Words(sentence.begin() + static_cast<std::ptrdiff_t>(i),
                   sentence.begin() + static_cast<std::ptrdiff_t>(i) + n)];
  return counts;
}

}  // namespace

Bleu corpus_bleu(const std::vector<Words>& candidates, const std::vector<Words>& references,
                 const BleuOptions& options) {
  if (candidates.size() != references.size() || candidates.empty())
    fail("corpus_bleu: {} candidates and {} references (need the same number, at least one)",
         candidates.size(), references.size());
  if (options.max_order < 1)
    fail("corpus_bleu: max_order must be at least 1, got {}", options.max_order);
  const std::size_t orders = static_cast<std::size_t>(options.max_order);
  Bleu bleu;
  bleu.matches.assign(orders, 0);
  bleu.totals.assign(orders, 0);
  for (std::size_t s = 0; s < candidates.size(); ++s) {
    bleu.candidate_length += static_cast<Index>(candidates[s].size());
    bleu.reference_length += static_cast<Index>(references[s].size());
    for (int n = 1; n <= options.max_order; ++n) {
      const std::map<Words, Index> reference = ngram_counts(references[s], n);
      for (const auto& [ngram, count] : ngram_counts(candidates[s], n)) {
        // Clipped: an n-gram counts at most as often as the reference has it ("the the the").
        const auto found = reference.find(ngram);
        bleu.matches[static_cast<std::size_t>(n - 1)] +=
            std::min(count, found == reference.end() ? Index{0} : found->second);
        bleu.totals[static_cast<std::size_t>(n - 1)] += count;
      }
    }
  }
  double log_precision_sum = 0;
  bool some_order_is_zero = false;
  for (std::size_t n = 0; n < orders; ++n) {
    double p = bleu.totals[n] > 0 ? static_cast<double>(bleu.matches[n]) / bleu.totals[n] : 0.0;
    if (bleu.matches[n] == 0 && options.smooth && bleu.totals[n] > 0)
      p = options.epsilon / bleu.totals[n];  // Chen & Cherry smoothing 1
    bleu.precisions.push_back(p);
    if (p == 0)
      some_order_is_zero = true;
    else
      log_precision_sum += std::log(p);
  }
  const double c = static_cast<double>(bleu.candidate_length);
  const double r = static_cast<double>(bleu.reference_length);
  bleu.brevity_penalty = c == 0 ? 0.0 : c > r ? 1.0 : std::exp(1.0 - r / c);
  bleu.score = some_order_is_zero
                   ? 0.0
                   : bleu.brevity_penalty * std::exp(log_precision_sum / options.max_order);
  return bleu;
}

double sentence_bleu(const Words& candidate, const Words& reference) {
  return corpus_bleu({candidate}, {reference}, {.smooth = true}).score;
}

}  // namespace attend::seq
