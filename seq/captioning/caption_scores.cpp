// How good are the captions, and does the attention look at the right place?
//
// Words: exact match (the whole caption right), word accuracy, and corpus BLEU-4 (seq/bleu.h).
// Places: for every word that names an object (its colour or its noun), where the attention
// that chose it lies relative to that object's box (interpret/localisation.h). The canvases
// record the exact boxes, which real captioning data sets do not have: the paper could only
// show pictures.
#include "seq/captioning/caption_scores.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "seq/bleu.h"
#include "seq/captioning/caption_search.h"
#include "tensor/shape_ops.h"

namespace attend::captioning {

std::vector<NDArray> reference_attention(CaptionDecoder& decoder, const NDArray& regions,
                                         const std::vector<CanvasExample>& canvases,
                                         const Vocabulary& vocab) {
  NoGradGuard no_graph;
  std::vector<NDArray> out;
  constexpr std::size_t kChunk = 64;
  for (std::size_t start = 0; start < canvases.size(); start += kChunk) {
    std::vector<Index> indices;
    std::vector<const CanvasExample*> batch;
    for (std::size_t i = start; i < std::min(canvases.size(), start + kChunk); ++i) {
      indices.push_back(static_cast<Index>(i));
      batch.push_back(&canvases[i]);
    }
    CaptionBatch captions = make_caption_batch(batch, vocab);
    NDArray alphas = unroll(decoder, rows(regions, indices), captions.inputs).alphas.data();
    for (std::size_t b = 0; b < batch.size(); ++b)
      out.push_back(slice(alphas, 0, static_cast<Index>(b), static_cast<Index>(b) + 1)
                        .reshape({alphas.size(1), alphas.size(2)}));
  }
  return out;
}

CaptionScores evaluate(CaptionDecoder& decoder, const NDArray& regions,
                       const std::vector<CanvasExample>& canvases, const Vocabulary& vocab,
                       Index beam_width,
                       const std::vector<std::vector<interpret::RegionCentre>>& centres) {
  if (canvases.empty()) fail("evaluate (captions): no canvases to evaluate on");
  if (regions.ndim() != 3 || regions.size(0) != static_cast<Index>(canvases.size()))
    fail("evaluate (captions): regions {} do not fit {} canvases ([N, L, D] expected)",
         regions.shape(), canvases.size());
  std::vector<std::vector<std::string>> generated, references;
  constexpr Index kChunk = 64;
  for (Index start = 0; start < static_cast<Index>(canvases.size()); start += kChunk) {
    std::vector<Index> indices;
    for (Index i = start; i < std::min<Index>(static_cast<Index>(canvases.size()), start + kChunk);
         ++i)
      indices.push_back(i);
    Tensor chunk = rows(regions, indices);
    if (beam_width <= 1) {
      for (const Caption& c : greedy_decode(decoder, chunk))
        generated.push_back(words_of(c, vocab));
    } else {
      for (std::size_t b = 0; b < indices.size(); ++b)
        generated.push_back(
            words_of(beam_decode(decoder, rows(regions, {indices[b]}), beam_width), vocab));
    }
  }
  CaptionScores scores;
  constexpr std::size_t kMistakesKept = 6;
  Index exact = 0, right_words = 0, reference_words = 0;
  for (std::size_t n = 0; n < canvases.size(); ++n) {
    const std::vector<std::string>& reference = canvases[n].words;
    references.push_back(reference);
    exact += generated[n] == reference;
    if (generated[n] != reference && scores.mistakes.size() < kMistakesKept)
      scores.mistakes.push_back(
          fmt::format("{} -> {}", fmt::join(reference, " "), fmt::join(generated[n], " ")));
    for (std::size_t t = 0; t < reference.size(); ++t) {
      const bool right = t < generated[n].size() && generated[n][t] == reference[t];
      right_words += right;
      if (!right) ++scores.missed_words[reference[t]];
    }
    reference_words += static_cast<Index>(reference.size());
  }
  scores.exact_match = static_cast<double>(exact) / static_cast<double>(canvases.size());
  scores.word_accuracy = static_cast<double>(right_words) / static_cast<double>(reference_words);
  scores.bleu4 = seq::corpus_bleu(generated, references).score;  // seq/bleu.h
  std::vector<NDArray> maps = reference_attention(decoder, regions, canvases, vocab);
  if (!centres.empty()) {
    scores.where = interpret::localisation(canvases, maps, centres);
    return scores;
  }
  const Index grid =
      static_cast<Index>(std::lround(std::sqrt(static_cast<double>(regions.size(1)))));
  const NDArray& image = canvases[0].image;
  scores.where =
      interpret::localisation(canvases, maps, grid, image.defined() ? image.size(-1) : kCanvasSize);
  return scores;
}

}  // namespace attend::captioning
