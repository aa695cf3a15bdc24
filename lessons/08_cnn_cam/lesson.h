// Lesson 08: CNN features and class activation maps. What main.cpp runs, in the order of the
// chapter (docs/08_cnn_cam.md), one file each. Parts (a) to (e) are the library's vision/
// (namespace attend::vision, which lessons 13 and 14 reuse; the using-declarations below name
// them here); (f) and (g) are this lesson's own:
//
//   (a) vision/canvas_set.cpp           canvases of 1-3 Fashion-MNIST items as a multi-label
//                                       data set: which classes are on each canvas, and
//                                       where (the true boxes)
//   (b) vision/canvas_encoder.cpp       CanvasEncoder, 3 x [conv3x3 + ReLU + maxpool2]: a
//                                       64x64 canvas becomes an 8x8 grid of 64-d region
//                                       features
//       vision/cam_classifier.cpp       CamClassifier: global average pooling + one linear
//                                       layer on top of the encoder
//   (c) vision/multilabel_training.cpp  multi-label training with binary cross-entropy and
//                                       Adam (of any images -> logits model)
//   (d) vision/multilabel_metrics.cpp   per-class average precision and F1 on held-out
//                                       canvases
//   (e) vision/grad_cam.cpp             Grad-CAM (Selvaraju et al. 2017) of this model: the
//                                       gradients of its class logits; the maps themselves,
//                                       and CAM (Zhou et al. 2016), are interpret/cam.h's
//   (f) evaluate.cpp                    every map (CAM, Grad-CAM on two grids, brightness,
//                                       centre, random) of every (test canvas, class) pair,
//                                       scored
//   (g) section_figures.cpp             the canvases with their boxes, and the maps overlaid
//                                       on them (the panels: nn/viz/panels.h)
//
// The program itself: program.h (its flags) and section_data.cpp, section_pointing.cpp,
// section_figures.cpp (the sections main.cpp runs, as they print and draw), on top of the
// functions here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson08 {

// ---- (a) data: the library's vision/canvas_set.h ----------------------------------------------
//
// Canvases as a multi-label data set (CanvasSet: images, multi-hot labels, the objects with
// their boxes), the three splits (make_canvas_data), class counts, the boxes of one class on
// a canvas, one canvas as an image, and the pixel statistics that standardise the input.
using vision::boxes_of_class;
using vision::canvas_image;
using vision::CanvasData;
using vision::CanvasDataOptions;
using vision::CanvasSet;
using vision::class_counts;
using vision::classes_on_canvases;
using vision::ClassOnCanvas;
using vision::make_canvas_data;
using vision::pixel_statistics;
using vision::PixelStatistics;
using vision::to_canvas_set;

// ---- (b) the model: the library's vision/canvas_encoder.h and vision/cam_classifier.h ---------
//
// ConvBlock (conv3x3 + ReLU + maxpool2, He-initialised), EncoderShape (the channels: 32, 64,
// 64), CanvasEncoder (three blocks: a 64x64 canvas becomes an 8x8 grid of 64-d region
// features; forward_blocks runs some of them; set_input_statistics standardises the pixels)
// and CamClassifier (encoder, global average pooling, one linear layer `classifier`;
// classify is the head alone).
using vision::CamClassifier;
using vision::CanvasEncoder;
using vision::ConvBlock;
using vision::EncoderShape;

// ---- (c) training: the library's vision/multilabel_training.h ---------------------------------
//
// TrainOptions and EpochRecord; initialise_class_priors (the classifier's biases at the
// classes' log-odds); train_classifier (Adam on one binary cross-entropy per class, for any
// images -> logits module); predict_logits (a whole set's logits without a graph).
using vision::EpochRecord;
using vision::initialise_class_priors;
using vision::predict_logits;
using vision::train_classifier;
using vision::TrainOptions;

// ---- (d) metrics: the library's vision/multilabel_metrics.h -----------------------------------
//
// average_precision of one class, and evaluate_classifier: per-class AP and F1, mAP, macro
// F1, exact match and the loss of a set's logits (ClassificationReport).
using vision::average_precision;
using vision::ClassificationReport;
using vision::evaluate_classifier;

// ---- (e) CAM and Grad-CAM: the library's interpret/cam.h and vision/grad_cam.h --------------
//
// CAM itself (interpret::class_activation_maps), Grad-CAM from features and gradients and
// its counterfactual variant, and upsample_map are interpret/cam.h's: they work for any
// model. vision/grad_cam.h gets the gradients of this model: grad_cam(model, images, classes,
// block) backpropagates each image's class logit to encoder block 3 (the 8x8 grid, where
// Grad-CAM equals CAM) or 2 (the 16x16 grid under it, where there is no CAM), and returns the
// features, gradients and maps (GradCam).
using vision::grad_cam;
using vision::GradCam;

// ---- (f) the pointing game -------------------------------------------------------------------
//
// The measures (map_maximum, distance_to_box, pointing_hit, hit_area_share,
// mass_inside_boxes, PointingTally) are the library's: interpret/pointing.h.
// ---- (f) continued: every map of every pair, scored: evaluate.cpp ------------------------

// The maps the lesson compares, and two baselines that know nothing about the model.
enum MapKind : int {
  kCam,         // CAM on the 8x8 grid
  kGradCam8,    // Grad-CAM on the 8x8 grid (block 3): CAM again, up to scale and ReLU
  kGradCam16,   // Grad-CAM on the 16x16 grid under it (block 2), where CAM does not exist
  kBrightness,  // the canvas's own brightness averaged over 8x8 cells: "find any object"
  kCentre,      // a bump at the centre of the canvas (Zhang et al.'s "center" baseline)
  kRandom,      // independent uniform random values at every pixel
  kMapKinds
};
const char* map_kind_name(int kind);

// For images [B, 3, S, S] and one class each: every kind's map, float64 [B, h, w] at the
// kind's own resolution (8x8, 16x16 or S x S). `gen` draws the random maps.
std::vector<NDArray> explanation_maps(CamClassifier& model, const NDArray& images,
                                      const std::vector<Index>& classes, Generator& gen);

// The (held-out canvas, class present on it) pairs are vision::classes_on_canvases.

struct PointingOptions {
  double tolerance = 2;    // pixels (see the chapter)
  std::uint64_t seed = 0;  // the random maps
  Index batch = 50;        // pairs per forward/backward pass (more: faster, more memory)
};

struct PointingResults {
  std::vector<ClassOnCanvas> pairs;
  std::vector<std::vector<double>> hits;                            // hits[pair][kind]: 1 or 0
  std::vector<double> random_expected;                              // per pair: the hit area share
  std::vector<interpret::PointingTally> all, with_distractor;       // per kind
  interpret::PointingTally expected_all, expected_with_distractor;  // the random baseline, exactly
  // Grad-CAM on the last grid against CAM: max over pairs and cells of
  // |Z * Grad-CAM - ReLU(CAM)| / max |CAM| (0 up to rounding), and how many pairs have their
  // maximum at the same pixel in both.
  double identity_gap = 0;
  Index same_point = 0;
  Index no_positive_cam = 0;  // pairs whose CAM has no positive cell: Grad-CAM is all 0
  // The largest distance in pixels between the two maxima over the other pairs (the ReLU
  // can move the upsampled peak where a neighbouring cell is negative).
  double largest_shift = 0;
};

// Upsamples every map to S x S and scores it: the pointing game at `tolerance`, and the share
// of its mass inside the class's boxes (a map with negative values, like a CAM, is first
// shifted to a minimum of 0, the way the overlays show it).
PointingResults play_pointing_game(CamClassifier& model, const CanvasSet& set,
                                   const PointingOptions& options);

// ---- (g) figures ------------------------------------------------------------------------------
//
// The panels (a canvas magnified, boxes outlined, a map overlaid and its peak marked) and their
// layout in one PNG are the library's, nn/viz/panels.h: lesson 13 draws its maps the same way.

}  // namespace attend::lesson08
