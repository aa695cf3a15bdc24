// How good are a captioner's captions, and does its attention look at the right place?
// Words: exact match, word accuracy and corpus BLEU-4; places: interpret::localisation of the
// attention at each word of the reference captions against the objects' boxes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "interpret/localisation.h"
#include "seq/captioning/caption_data.h"
#include "seq/captioning/caption_decoder.h"

namespace attend::captioning {

// Teacher-forced attention maps of the reference captions, one [T_n, L] per canvas.
std::vector<NDArray> reference_attention(CaptionDecoder& decoder, const NDArray& regions,
                                         const std::vector<CanvasExample>& canvases,
                                         const Vocabulary& vocab);

struct CaptionScores {
  double exact_match = 0;    // share of captions equal to the reference, word for word
  double word_accuracy = 0;  // share of reference positions with the right word
  double bleu4 = 0;
  interpret::Localisation where;
  // The first few wrong captions, "reference -> generated", and per reference word: how
  // often it was not generated at its position (which words the errors are made of).
  std::vector<std::string> mistakes;
  std::map<std::string, Index> missed_words;
};
// Greedy (beam_width 1) or beam decoding of every canvas, scored against its reference.
// The regions are a square grid's, unless `centres` lists where each canvas's regions are
// (object regions: region_centres in object_regions.h).
CaptionScores evaluate(CaptionDecoder& decoder, const NDArray& regions,
                       const std::vector<CanvasExample>& canvases, const Vocabulary& vocab,
                       Index beam_width,
                       const std::vector<std::vector<interpret::RegionCentre>>& centres = {});

}  // namespace attend::captioning
