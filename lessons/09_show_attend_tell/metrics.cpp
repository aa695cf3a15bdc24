// How good are the captions, and does the attention look at the right place?
//
// Words: exact match (the whole caption right), word accuracy, and corpus BLEU-4.
// Places: for every word that names an object (its colour or its noun), where the attention
// that chose it lies relative to that object's box. The canvases record the exact boxes,
// which real captioning data sets do not have: the paper could only show pictures.
#include <algorithm>
#include <cmath>
#include <map>

#include "lessons/09_show_attend_tell/lesson.h"

namespace attend::lesson09 {

// ---- BLEU (Papineni et al. 2002; papers.md section 12) ------------------------------------

namespace {

using NgramCounts = std::map<std::vector<std::string>, Index>;

NgramCounts ngrams(const std::vector<std::string>& words, std::size_t n) {
  NgramCounts counts;
  for (std::size_t i = 0; i + n <= words.size(); ++i)
    ++counts[std::vector<std::string>(words.begin() + static_cast<std::ptrdiff_t>(i),
                                      words.begin() + static_cast<std::ptrdiff_t>(i + n))];
  return counts;
}

}  // namespace

double corpus_bleu4(const std::vector<std::vector<std::string>>& candidates,
                    const std::vector<std::vector<std::string>>& references) {
  if (candidates.size() != references.size())
    fail("corpus_bleu4: {} candidates but {} references", candidates.size(), references.size());
  constexpr std::size_t kOrder = 4;
  double matched[kOrder] = {}, total[kOrder] = {};
  double candidate_length = 0, reference_length = 0;
  for (std::size_t s = 0; s < candidates.size(); ++s) {
    candidate_length += static_cast<double>(candidates[s].size());
    reference_length += static_cast<double>(references[s].size());
    for (std::size_t n = 1; n <= kOrder; ++n) {
      NgramCounts reference = ngrams(references[s], n);
      for (const auto& [gram, count] : ngrams(candidates[s], n)) {
        // Clipped count: a candidate n-gram scores at most as often as the reference has it.
        auto found = reference.find(gram);
        matched[n - 1] +=
            static_cast<double>(std::min(count, found == reference.end() ? 0 : found->second));
        total[n - 1] += static_cast<double>(count);
      }
    }
  }
  double log_precision = 0;
  for (std::size_t n = 0; n < kOrder; ++n) {
    if (matched[n] == 0 || total[n] == 0) return 0;  // no smoothing at corpus level
    log_precision += std::log(matched[n] / total[n]) / kOrder;
  }
  // Brevity penalty: BP = exp(1 - r/c) when the candidates are shorter than the references.
  const double brevity = std::min(0.0, 1.0 - reference_length / candidate_length);
  return std::exp(brevity + log_precision);
}

// ---- localisation -----------------------------------------------------------------------

Localisation localisation(const std::vector<CanvasExample>& canvases,
                          const std::vector<NDArray>& alphas, Index grid, Index canvas_size) {
  if (canvases.size() != alphas.size())
    fail("localisation: {} canvases but {} attention maps", canvases.size(), alphas.size());
  const double cell = static_cast<double>(canvas_size) / static_cast<double>(grid);
  const Index regions = grid * grid;
  Localisation out;
  Index hits = 0, noun_hits = 0, nouns = 0, before_hits = 0, befores = 0;
  double mass = 0;
  Index changed = 0;
  double variation = 0;
  for (std::size_t n = 0; n < canvases.size(); ++n) {
    const CanvasExample& canvas = canvases[n];
    const NDArray weights = alphas[n].to(kFloat64);  // [T, L]
    if (weights.size(0) < static_cast<Index>(canvas.words.size()) || weights.size(1) != regions)
      fail("localisation: canvas {} has {} words but attention {}", n, canvas.words.size(),
           weights.shape());
    const double* w = weights.data<double>();
    std::vector<Index> noun_argmax;         // per object: the argmax at its noun
    std::vector<const double*> noun_alpha;  // and the map there
    for (std::size_t t = 0; t < canvas.words.size(); ++t) {
      const int object = canvas.word_object[t];
      const double* a = w + static_cast<Index>(t) * regions;
      const Index best = std::max_element(a, a + regions) - a;
      auto inside_box = [&](const data::Box& box, Index i) {
        // the centre of region i = (row i / grid, column i % grid)
        return box.contains((static_cast<double>(i % grid) + 0.5) * cell,
                            (static_cast<double>(i / grid) + 0.5) * cell);
      };
      if (object < 0) {
        const bool object_next = t + 1 < canvas.words.size() && canvas.word_object[t + 1] >= 0;
        if (object_next) {
          ++befores;
          before_hits += inside_box(
              canvas.objects[static_cast<std::size_t>(canvas.word_object[t + 1])].box, best);
        }
        continue;
      }
      const data::Box& box = canvas.objects[static_cast<std::size_t>(object)].box;
      auto inside = [&](Index i) { return inside_box(box, i); };
      hits += inside(best);
      for (Index i = 0; i < regions; ++i) mass += inside(i) ? a[i] : 0.0;
      ++out.object_words;
      // The noun is the last word naming its object (after the colour).
      const bool is_noun = t + 1 == canvas.words.size() || canvas.word_object[t + 1] != object;
      if (is_noun) {
        ++nouns;
        noun_hits += inside(best);
        noun_argmax.push_back(best);
        noun_alpha.push_back(a);
      }
    }
    if (noun_argmax.size() >= 2) {
      ++out.multi_object_canvases;
      changed += noun_argmax[0] != noun_argmax[1];
      double tv = 0;
      for (Index i = 0; i < regions; ++i) tv += 0.5 * std::abs(noun_alpha[0][i] - noun_alpha[1][i]);
      variation += tv;
    }
  }
  if (out.object_words > 0) {
    out.hit_rate = static_cast<double>(hits) / static_cast<double>(out.object_words);
    out.mass_in_box = mass / static_cast<double>(out.object_words);
    if (befores > 0)
      out.before_hit_rate = static_cast<double>(before_hits) / static_cast<double>(befores);
    if (nouns > 0) out.noun_hit_rate = static_cast<double>(noun_hits) / static_cast<double>(nouns);
    if (out.object_words > nouns)
      out.colour_hit_rate =
          static_cast<double>(hits - noun_hits) / static_cast<double>(out.object_words - nouns);
  }
  if (out.multi_object_canvases > 0) {
    out.argmax_changes =
        static_cast<double>(changed) / static_cast<double>(out.multi_object_canvases);
    out.total_variation = variation / static_cast<double>(out.multi_object_canvases);
  }
  return out;
}

std::vector<NDArray> reference_attention(Decoder& decoder, const NDArray& regions,
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

std::vector<std::string> words_of(const Caption& caption, const Vocabulary& vocab) {
  return vocab.decode_words(caption.ids);
}

CaptionScores evaluate(Decoder& decoder, const NDArray& regions,
                       const std::vector<CanvasExample>& canvases, const Vocabulary& vocab,
                       Index beam_width) {
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
  scores.bleu4 = corpus_bleu4(generated, references);
  const Index grid =
      static_cast<Index>(std::lround(std::sqrt(static_cast<double>(regions.size(1)))));
  const NDArray& image = canvases.at(0).image;
  scores.where = localisation(canvases, reference_attention(decoder, regions, canvases, vocab),
                              grid, image.defined() ? image.size(-1) : kCanvasSize);
  return scores;
}

}  // namespace attend::lesson09
