// BLEU (Papineni et al. 2002): how many of the candidate's n-grams appear in the reference,
// with a penalty for candidates shorter than their references.
//
//   Bleu b = seq::corpus_bleu(model_outputs, references);   // b.score in [0, 1]
#pragma once

#include <string>
#include <vector>

#include "tensor/shape.h"

namespace attend::seq {

using Words = std::vector<std::string>;

struct BleuOptions {
  int max_order = 4;  // BLEU-4
  // Chen & Cherry (2014) smoothing 1: an order with no matching n-gram counts epsilon
  // matches instead of 0 (otherwise one such order makes the whole BLEU 0). Off for corpus
  // BLEU, as in Papineni et al.; on for the BLEU of a single sentence.
  bool smooth = false;
  double epsilon = 0.1;
};

struct Bleu {
  double score = 0;                // in [0, 1]; reported x 100
  std::vector<Index> matches;      // clipped n-gram matches, n = 1..max_order
  std::vector<Index> totals;       // candidate n-grams
  std::vector<double> precisions;  // p_n = matches / totals (smoothed if asked)
  Index candidate_length = 0;      // c
  Index reference_length = 0;      // r
  double brevity_penalty = 1;      // 1 if c > r, else exp(1 - r/c)
};

// Corpus BLEU with one reference per candidate: clipped n-gram counts, candidate n-gram
// counts and lengths are summed over the corpus before dividing (papers.md section 12):
//   BLEU = BP * exp(sum_n (1/N) log p_n).
Bleu corpus_bleu(const std::vector<Words>& candidates, const std::vector<Words>& references,
                 const BleuOptions& options = {});
// One sentence, smoothed.
double sentence_bleu(const Words& candidate, const Words& reference);

}  // namespace attend::seq
