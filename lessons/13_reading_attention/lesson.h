// Lesson 13: reading attention maps. What main.cpp runs, in the order of the chapter
// (docs/13_reading_attention.md):
//
//   Part 1  a Vision Transformer on lesson 08's canvases (images.h):
//             vit_model.cpp          the ViT of nn/vision_transformer.h, its input standardised
//             image_maps.cpp         every method's map of a (canvas, class) pair
//             image_scores.cpp       pointing game, mass in boxes, deletion and insertion
//             image_sanity.cpp       cascading randomisation, a model on shuffled labels
//             image_figures.cpp      the maps over the canvases, one row per method
//   Part 2  lesson 11's encoder-decoder Transformer on dates (dates.h):
//             dates_model.cpp        its trained model, loaded from lesson 11's checkpoint
//             dates_methods.cpp      raw attention, rollout and relevance against the spans
//             dates_heads.cpp        every head masked, then pruned step by step
//             dates_replacement.cpp  the cross-attention permuted or replaced at inference
//
// The methods (rollout, relevance, the scores) are in the library, interpret/; the hook that
// masks and replaces attention weights is nn::MultiheadAttention::weights_hook.
#pragma once

#include "attend.h"
#include "dates.h"
#include "images.h"
#include "program.h"
