// seq/captioning/: the canvas captioner of Show, Attend and Tell (Xu et al. 2015), shared by
// lessons 09 (soft attention) and 10 (hard attention), namespace attend::captioning.
//
//   caption_data.h      canvas sizes, the caption vocabulary, teacher-forcing batches
//   region_encoder.h    the CNN: canvas -> 8x8 regions a_i, its pre-training
//   canvas_pipeline.h   encoder pre-trained or loaded from the cache, canvases, their regions
//   caption_decoder.h   the LSTM decoder with attention (eqs 1-7), the teacher-forced unroll
//   caption_loss.h      -log p(y|a) + lambda * the doubly stochastic penalty
//   caption_search.h    greedy and beam decoding
//   caption_scores.h    exact match, BLEU-4, localisation of the attention
//   object_regions.h    regions over objects instead of a grid: proposals, pooling, padding
//   train_decoder.h     the training loop
#pragma once

#include "seq/captioning/canvas_pipeline.h"
#include "seq/captioning/caption_data.h"
#include "seq/captioning/caption_decoder.h"
#include "seq/captioning/caption_loss.h"
#include "seq/captioning/caption_scores.h"
#include "seq/captioning/caption_search.h"
#include "seq/captioning/object_regions.h"
#include "seq/captioning/region_encoder.h"
#include "seq/captioning/region_file.h"
#include "seq/captioning/train_decoder.h"
