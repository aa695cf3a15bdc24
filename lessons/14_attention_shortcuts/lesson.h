// Lesson 14: when attention is wrong. A classifier of canvases learns a shortcut - a tinted
// band that comes with trousers on 95% of the training canvases - and its class map shows it
// looking at the band; then three fixes that use attention as a training signal. The
// functions that main.cpp runs, in the order of the chapter (docs/14_attention_shortcuts.md):
//
//   data.cpp      (a) canvases with the cue (nn/data/canvas_cue.h): training canvases where
//                     the band goes with the cue class, and three test sets of the same
//                     canvases where the band is aligned with the class, conflicts with it,
//                     or is independent of it; the few training canvases whose boxes GAIN_ext
//                     may use
//   training.cpp  (b) one training loop for every model: the multi-label loss L_cl, plus GAIN's
//                     attention mining L_am and extra supervision L_e when their weights are
//                     not 0 (the pieces are the library's: interpret/guided_attention.h)
//   erasing.cpp   (c) adversarial erasing: the training canvases with each class's most
//                     attended region erased, for the next classifier to train on
//   measure.cpp   (d) the numbers: balanced accuracy on the three test sets, and the share
//                     of each class map's mass on the band and inside the item's box
//   figures.cpp   (e) the maps of every model overlaid on conflicting test canvases
//
// The classifier (CanvasEncoder + global average pooling + linear, lesson 08's) and its
// multi-label data set are the library's vision/; the program's flags and sections are in
// program.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson14 {

using vision::boxes_of_class;
using vision::CamClassifier;
using vision::CanvasSet;
using vision::EncoderShape;
using vision::predict_logits;

// Canvases per forward pass when nothing is trained (logits, maps): at 25 the largest
// temporary of the first convolution block is 13 MB, at vision's default of 100 it is 4 times
// that, and the program's peak memory grows with it.
constexpr Index kEvalBatch = 25;

// ---- (a) data: data.cpp ------------------------------------------------------------------------

// The five classes of lessons 09-10, whose shapes differ even at 18 pixels: T-shirt/top,
// Trouser, Sandal, Bag, Ankle boot. The cue goes with trousers by default.
inline const std::vector<Index> kShortcutClasses = {0, 1, 5, 8, 9};

// 2000 training canvases, boxes on 10% of them (and 2 erasing steps, ErasingOptions): the
// recipe of 3000, 8% and 3 steps told the same story for 1.75 times the CPU time (the
// chapter's last section has both).
struct DataOptions {
  Index train = 2000, validation = 200, test = 500;  // test: canvases in each test set
  std::uint64_t seed = 0;
  bool synthetic = false;  // the generated stand-in for Fashion-MNIST (no files needed)
  std::string folder = data::kFashionMnistFolder;
  data::CanvasCue cue = {.label = 1};  // the band, its class (Trouser) and its training rates
  double box_share = 0.1;  // the share of training canvases whose boxes GAIN_ext may use
};

// A multi-label set (vision::CanvasSet) and, per canvas, its band (cue_box is empty without).
struct CueSet {
  CanvasSet set;
  std::vector<bool> has_cue;
  std::vector<data::Box> cue_box;
};

struct ShortcutData {
  CueSet train, validation;                  // the training cue: the band means the class
  CueSet aligned, conflicting, independent;  // the same held-out canvases, three rules
  std::vector<bool> boxed;  // per training canvas: its boxes may be used (GAIN_ext)
  std::vector<std::string> class_names;
  Index cue_class = 0;
};

ShortcutData make_shortcut_data(const DataOptions& options);

// ---- (b) training: training.cpp -----------------------------------------------------------------

struct GuidedOptions {
  int epochs = 3;
  Index batch = 16;
  double lr = 5e-3;                  // Adam's peak learning rate (cosine decay to lr / 10)
  std::uint64_t shuffle_seed = 0;    // the order of the training canvases
  bool progress = true;              // the progress line on stderr
  double mining_weight = 0;          // alpha of L_am; 0: no attention mining
  double extra_weight = 0;           // the weight of L_e; 0: no extra supervision
  interpret::GainOptions gain = {};  // the soft mask's sigma and omega
  // GAIN averages L_am over every class on a canvas; by default each step draws one of them
  // per canvas (an unbiased estimate of that mean, see class_pairs), which keeps the masked
  // batch at the batch's size: less work than all of them, and the same shapes at every step.
  // (L_e needs no second forward pass and always takes every class of a boxed canvas.)
  bool all_classes = false;
  std::uint64_t class_seed = 0;  // the draws of one class per canvas
};

// The three losses of one batch. mining and extra are 0-d tensors, undefined when their
// weight is 0 (extra also when no canvas of the batch has its boxes).
struct GuidedLosses {
  Tensor classification, mining, extra;
  Tensor total(const GuidedOptions& options) const;
};

// (canvas, class present on it) pairs of the rows of a multi-hot label array.
struct ClassPairs {
  std::vector<std::int64_t> canvas;  // the row in the batch
  std::vector<Index> label;
};
// Every pair; with `gen`, one pair per canvas instead, its class drawn uniformly among those
// on the canvas. The mean of L_am over the drawn pairs is then, in expectation, the mean over
// canvases of GAIN's (1/n) sum_c: each of a canvas's n classes is drawn with probability 1/n.
ClassPairs class_pairs(const NDArray& labels, Generator* gen = nullptr);

// The losses of the canvases `rows` of the training set (the batch):
//   L_cl  binary cross-entropy of the logits, one per class (lesson 08's loss)
//   L_am  each pair's canvas with its scaled, upsampled class map softly erased, scored
//         (one class per canvas, drawn by `gen`, unless options.all_classes)
//   L_e   every class of the boxed canvases: its map against the mask of its boxes
GuidedLosses guided_losses(CamClassifier& model, const CueSet& train,
                           const std::vector<bool>& boxed, const std::vector<Index>& rows,
                           const GuidedOptions& options, Generator& gen);

struct GuidedRecord {
  int epoch = 0;
  double classification = 0, mining = 0, extra = 0;  // the epoch's mean losses
  double validation_map = 0;                         // mean average precision
  double seconds = 0;
};

// Adam on GuidedLosses::total over the training canvases; calls after_epoch with each record.
std::vector<GuidedRecord> train_guided(
    CamClassifier& model, const CueSet& train, const std::vector<bool>& boxed,
    const CueSet& validation, const GuidedOptions& options,
    const std::function<void(const GuidedRecord&)>& after_epoch = {});

// A classifier as lesson 08 starts it: the input standardised with the training pixels'
// statistics, the class biases at the classes' log-odds.
void prepare_classifier(CamClassifier& model, const CanvasSet& train);

// ---- (c) adversarial erasing: erasing.cpp ------------------------------------------------------

struct ErasingOptions {
  int steps = 2;           // classifiers trained in turn (the first on the plain canvases)
  double threshold = 0.5;  // a pixel is erased where a scaled class map reaches this
};

// One step of Wei et al.: for every training canvas and every class on it, the model's
// scaled class map at pixel resolution; the pixels where one reaches the threshold are set to
// the mean pixel `fill` (per channel). Overwrites the pixels of train.set.images (float32) in
// place, so every copy of that array sees them; returns the share of the pixels erased.
double erase_attended(CamClassifier& model, CueSet& train, double threshold,
                      const std::vector<double>& fill);

// The mean of every channel over a set of images [N, C, H, W].
std::vector<double> mean_pixel(const NDArray& images);

// ---- (d) measures: measure.cpp
// -------------------------------------------------------------------

// Scaled Grad-CAM at pixel resolution, the map the losses use: ReLU(CAM) / its maximum on the
// 8x8 grid, upsampled bilinearly. images [P, 3, S, S], one class each -> float64 [P, S, S].
NDArray class_maps(CamClassifier& model, const NDArray& images, const std::vector<Index>& classes,
                   Index batch = kEvalBatch);
// The same maps for several classes of each canvas, the encoder run once per canvas: map p is
// of canvas canvases[p] of `images` (a batch: all of it goes through the encoder at once) and
// of class classes[p]. -> float64 [P, S, S], each map as class_maps makes it.
NDArray class_maps(CamClassifier& model, const NDArray& images,
                   const std::vector<std::int64_t>& canvases, const std::vector<Index>& classes);

// The decision "the class is on the canvas" (logit > 0), scored as the mean of the share of
// the canvases with the class that it finds and the share of those without that it rejects:
// 0.5 for a constant answer, whatever the class's frequency.
double balanced_accuracy(const NDArray& logits, const NDArray& labels, Index label);

struct ShortcutScores {
  double aligned = 0, conflicting = 0, independent = 0;  // balanced accuracy, cue class
  double gap() const { return aligned - conflicting; }
  // On the aligned test canvases with the class (band and item both there): the mean share
  // of the cue class's map on the band and inside the boxes of the class's items.
  double mass_on_cue = 0, mass_in_box = 0;
};

// What one classifier says on the test sets, all that its scores are made of: its logits on
// the three test sets, and its scaled maps of the cue class on the aligned canvases with the
// class. Kept, they let several classifiers be scored together without running any again.
struct TestOutputs {
  NDArray aligned, conflicting, independent;  // logits [N, classes]
  NDArray maps;                               // float64 [P, S, S]
};
TestOutputs test_outputs(CamClassifier& model, const ShortcutData& d);

// The scores of one classifier, or of several together (adversarial erasing): their mean
// logits, and the union of their maps (the pixelwise maximum of the scaled maps).
ShortcutScores score_outputs(const std::vector<const TestOutputs*>& outputs, const ShortcutData& d);
// The same from the models themselves (test_outputs of each, then score_outputs).
ShortcutScores score_models(const std::vector<CamClassifier*>& models, const ShortcutData& d);

// ---- (e) figures: figures.cpp ------------------------------------------------------------------

struct MapColumn {
  std::string name;                    // "baseline", "GAIN", ...
  std::vector<CamClassifier*> models;  // several: the union of their maps, mean logits
};

// One row per chosen test canvas: the canvas (zoomed, the cue class's boxes and the band
// outlined), then each column's map of the cue class over it, captioned with the column's
// name and its probability that the class is there (viz::write_panels). Returns the same
// canvases as the viewer's examples (docs/viewer.md): each column's map as a method, with its
// probability, its mass in the item's boxes and on the band (when the canvas has them).
std::vector<viz::AttentionExample> write_overlays(const std::string& png, const CueSet& set,
                                                  const std::vector<Index>& canvases, Index label,
                                                  const std::string& class_name,
                                                  const std::vector<MapColumn>& columns,
                                                  Index zoom);

}  // namespace attend::lesson14
