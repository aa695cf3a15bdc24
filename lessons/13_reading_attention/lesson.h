// Lesson 13: reading attention maps. What main.cpp runs, in the order of the chapter
// (docs/13_reading_attention.md):
//
//   Part 1  a Vision Transformer on lesson 08's canvases (to come)
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
#include "program.h"
