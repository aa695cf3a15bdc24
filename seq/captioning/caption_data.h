// Canvas captions as a captioner sees them: the canvas sizes, the vocabulary of the captions,
// padded batches of word ids for teacher forcing, and images stacked into a batch.
//
// The decoder is trained with teacher forcing: at step t it is given the true previous word
// y_{t-1} (starting from <bos>) and asked for y_t (ending with <eos>). So a caption of n
// words gives n + 1 steps, with inputs and targets shifted by one.
#pragma once

#include <vector>

#include "autograd/tensor.h"
#include "nn/data/canvas.h"
#include "nn/data/vocabulary.h"

namespace attend::captioning {

using data::CanvasExample;
using data::Vocabulary;

constexpr Index kCanvasSize = 64;             // canvas side in pixels
constexpr Index kGridSide = kCanvasSize / 8;  // regions per side: three 2x max-pools
constexpr Index kMaxCaptionWords = 16;        // decoding stops here if <eos> never comes

// Every word a canvas caption can contain, plus <pad>, <bos>, <eos> and <unk>.
Vocabulary caption_vocabulary(const data::CanvasGenerator& generator);

// A batch for teacher forcing: inputs = <bos> w1 .. wn, targets = w1 .. wn <eos>, both padded
// with <pad> to the longest caption of the batch; mask is 1 at real steps.
struct CaptionBatch {
  Tensor inputs;   // int64 [B, T]
  Tensor targets;  // int64 [B, T]
  Tensor mask;     // float [B, T]
};
CaptionBatch make_caption_batch(const std::vector<const CanvasExample*>& examples,
                                const Vocabulary& vocab, DType dtype = kFloat32);

// The canvases' images stacked into [B, 3, S, S].
Tensor stack_images(const std::vector<const CanvasExample*>& examples);

// Rows `indices` of an [N, ...] array, as a Tensor (no gradient).
Tensor rows(const NDArray& all, const std::vector<Index>& indices);

}  // namespace attend::captioning
