// Turning the caption decoder's word probabilities into a caption: greedy decoding and beam
// search, each word kept with the attention map that chose it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/viz/attention_json.h"
#include "seq/captioning/caption_data.h"
#include "seq/captioning/caption_decoder.h"

namespace attend::captioning {

struct Caption {
  std::vector<std::int64_t> ids;  // the words, without <bos>/<eos>
  std::vector<NDArray> alphas;    // per word: the attention [L] used to choose it
  double log_probability = 0;
};
// The most likely word at every step. regions [B, L, D] -> one caption per image.
std::vector<Caption> greedy_decode(CaptionDecoder& decoder, const Tensor& regions,
                                   Index max_words = kMaxCaptionWords);
// Beam search: keeps the `width` best partial captions (by summed log-probability); a
// caption ends at <eos>. regions [1, L, D].
Caption beam_decode(CaptionDecoder& decoder, const Tensor& regions, Index width,
                    Index max_words = kMaxCaptionWords);

// The caption's words, as text.
std::vector<std::string> words_of(const Caption& caption, const Vocabulary& vocab);

// A canvas as an example for the attention viewer (nn/viz/attention_json.h): the picture
// inline (a data: URI), the true caption, and each object's box as the truth.
viz::AttentionExample canvas_attention_example(const data::CanvasExample& canvas, std::string name);
// The caption's attention as one image map per word (step), on the kGridSide x kGridSide
// grid of regions, under `method` (e.g. "soft", "hard"), the word as the map's token.
void add_caption_maps(viz::AttentionExample& example, const Caption& caption,
                      const Vocabulary& vocab, const std::string& method);

}  // namespace attend::captioning
