// Lesson 08: CNN features and class activation maps. The functions that main.cpp runs, in
// the order of the chapter (docs/08_cnn_cam.md), one file each. What lessons 13 and 14 reuse
// is the library's, in vision/ (attend::vision; the using-declarations below name it here):
//
//   vision/canvas_set.cpp  (a) canvases of 1-3 Fashion-MNIST items as a multi-label data set:
//                      which classes are on each canvas, and where (the true boxes)
//   vision/canvas_encoder.cpp  (b) CanvasEncoder, 3 x [conv3x3 + ReLU + maxpool2]: a 64x64
//                      canvas becomes an 8x8 grid of 64-d region features
//   vision/cam_classifier.cpp  (b) CamClassifier, global average pooling + one linear layer
//                      on top of the encoder
//   vision/multilabel_training.cpp  (c) multi-label training with binary cross-entropy and
//                      Adam, of any images -> logits model
//   vision/multilabel_metrics.cpp   (d) per-class average precision and F1 on held-out
//                      canvases
//   cam.cpp        (e) Grad-CAM (Selvaraju et al. 2017) of this model: the gradients of its
//                      class logits; the maps themselves, and CAM (Zhou et al. 2016), are
//                      computed by the library's interpret/cam.h
//   evaluate.cpp   (f) every map (CAM, Grad-CAM on two grids, brightness, centre, random)
//                      of every (test canvas, class) pair, scored
//   figures.cpp    (g) the canvases with their boxes, and the maps overlaid on them
//
// The program itself: program.h (its flags) and section_data.cpp, section_pointing.cpp,
// section_figures.cpp (the sections main.cpp runs, as they print and draw), on top of the functions
// here.
#pragma once

#include <cstdint>
#include <functional>
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

// ---- (e) CAM and Grad-CAM: cam.cpp ---------------------------------------------------------
//
// CAM itself (interpret::class_activation_maps), Grad-CAM from features and gradients and
// its counterfactual variant, and upsample_map are the library's (interpret/cam.h): they
// work for any model. Here: the gradients of this model.

// The encoder blocks whose output Grad-CAM reads: 3 is the 8x8 grid (the last one, where
// Grad-CAM equals CAM), 2 the 16x16 grid under it (where there is no CAM).
struct GradCam {
  NDArray features;   // A: block `block`'s output [B, K, h, w]
  NDArray gradients;  // dy^c/dA, with c each image's class (the logit, before the sigmoid)
  NDArray maps;       // float64 [B, h, w]
};
// Runs the model on images [B, 3, S, S] and backpropagates each image's class logit to the
// output of encoder block `block` (1, 2 or 3). The graph starts at that output (a fresh leaf)
// because dy/dA does not depend on anything computed before A. Leaves the model's
// gradients at zero.
GradCam grad_cam(CamClassifier& model, const NDArray& images, const std::vector<Index>& classes,
                 int block);

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

// One (held-out canvas, class present on it). distractor: another class is on the canvas
// too (the "difficult" case of Zhang et al., where pointing at any object is not enough).
struct PointingPair {
  Index canvas = 0, label = 0;
  bool distractor = false;
};
std::vector<PointingPair> pointing_pairs(const CanvasSet& set);

struct PointingOptions {
  double tolerance = 2;    // pixels (see the chapter)
  std::uint64_t seed = 0;  // the random maps
  Index batch = 100;       // pairs per forward/backward pass
};

struct PointingResults {
  std::vector<PointingPair> pairs;
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

// ---- (g) figures: figures.cpp ----------------------------------------------------------------

// One panel of a figure: an overlay (or the plain canvas), the class's boxes drawn on it,
// and a marker where the map is largest.
struct Panel {
  NDArray picture;  // float32 [3, H, W]
  std::string caption;
};

// The canvas, magnified `zoom` times, with every object's box outlined.
Panel canvas_panel(const NDArray& image, const std::vector<data::CanvasObject>& objects, Index zoom,
                   const std::string& caption);
// The map (any grid size; shifted to a minimum of 0 and scaled to a maximum of 1) over the
// canvas, the boxes of `label` outlined and the map's maximum marked with a cross.
Panel map_panel(const NDArray& image, const NDArray& map64, const std::vector<data::Box>& boxes,
                Index zoom, const std::string& caption);
// Rows of panels (rows may differ in length) written as one PNG, captions under the panels.
// With a scale_note, a colour bar of the overlays (inferno, lowest to highest) goes under the
// panels with the note beside it: what the colours mean, e.g. that each map has its own scale.
void write_panels(const std::string& png, const std::vector<std::vector<Panel>>& rows,
                  const std::string& scale_note = {});

}  // namespace attend::lesson08
