// interpret/: reading attention maps: where a model looked, scored against the truth.
//
//   alignment.h     a sequence model's attention against the true source spans: alignment
//                   accuracy, heatmap matrices, the invariants of attention weights
//   cam.h           where a CNN sees a class: CAM (Zhou et al. 2016), Grad-CAM (Selvaraju et
//                   al. 2017) from features and gradients, and a map grid upsampled to pixels
//   encoder_decoder_relevance.h  gradient-weighted relevance of an encoder-decoder
//                   Transformer (Chefer et al. 2021b: self- and cross-attention rules), and
//                   its gradient-free baselines
//   faithfulness.h  does a map point at what the model uses: deletion and insertion curves and
//                   their areas (Petsiuk et al. 2018)
//   guided_attention.h  attention as a training signal: GAIN's soft mask, masked image, mining
//                   and extra losses (Li et al. 2018), adversarial erasing (Wei et al. 2017)
//   localisation.h  captioning attention over grid cells against the objects' boxes
//   pointing.h      a pixel map scored against the true boxes: the pointing game (Zhang et
//                   al. 2016), its random baseline, the share of the map's mass inside the boxes
//   relevance.h     gradient-weighted attention relevance (Chefer et al. 2021b)
//   rollout.h       attention rollout and attention flow across layers (Abnar & Zuidema 2020),
//                   heads fused by mean, max or min
//   saliency.h      plain gradient (Simonyan et al. 2014) and input x gradient maps
//   sanity.h        Spearman rank correlation, ties averaged: the sanity checks' measure
//                   (Adebayo et al. 2018)
#pragma once

#include "interpret/alignment.h"
#include "interpret/cam.h"
#include "interpret/encoder_decoder_relevance.h"
#include "interpret/faithfulness.h"
#include "interpret/guided_attention.h"
#include "interpret/localisation.h"
#include "interpret/pointing.h"
#include "interpret/relevance.h"
#include "interpret/rollout.h"
#include "interpret/saliency.h"
#include "interpret/sanity.h"
