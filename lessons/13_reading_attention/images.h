// Lesson 13, part 1: a Vision Transformer on the canvases, and which of its maps tells the
// truth. The functions the program runs, in the order of the chapter (docs/13_part1_vit.md),
// one file each:
//
//   vit_model.cpp       (a) the ViT of nn/vision_transformer.h on the canvases, its input
//                           standardised; trained like lesson 08's CNN (vision/)
//   image_maps.cpp      (b) every method's map of a (canvas, class) pair: raw attention,
//                           rollout, flow, gradient-weighted relevance, Grad-CAM on tokens,
//                           gradient and input x gradient saliency, two baselines, the CNN's
//                           CAM and Grad-CAM
//   image_scores.cpp    (c) the maps scored: pointing game, mass in the boxes, deletion and
//                           insertion curves with patches blanked to the mean pixel
//   image_sanity.cpp    (d) the sanity checks of Adebayo et al. (2018): cascading
//                           randomisation from the top, and a model trained on shuffled labels
//   image_figures.cpp   (e) the maps over the canvases, one row per method
//   image_sections.cpp  the sections as the program prints and draws them
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend.h"
#include "program.h"

namespace attend::lesson13 {

// The canvases' side in pixels (lesson 08's), and how many times the figures magnify them.
constexpr Index kCanvasSize = 64;
constexpr Index kZoom = 2;

// ---- (a) the model: vit_model.cpp ------------------------------------------------------------

// The ViT of the flags, for 64x64 RGB canvases and `classes` outputs (need_weights off: it
// trains on the fused attention; the maps switch it on).
nn::VisionTransformerConfig vit_config(const Options& o, Index canvas_size, Index classes);

// The mean and standard deviation of all the pixels of images [N, C, H, W] (float32), summed
// in one pass without a copy (vision::pixel_statistics gives the same numbers through a
// float64 copy of every pixel: 400 MB for 4000 canvases).
vision::PixelStatistics pixel_statistics(const NDArray& images);

// (x - mean) / std, then the ViT: the canvases are mostly black (lesson 08), and
// standardising them as torchvision's Normalize does gives the patch embedding inputs of size
// about 1. A removed patch of the deletion curves is set to the mean: 0 after this step.
class CanvasVit : public nn::UnaryModule {
 public:
  CanvasVit(const nn::VisionTransformerConfig& config, vision::PixelStatistics pixels,
            Generator& gen = default_generator());
  Tensor forward(const Tensor& images) override;
  std::string describe() const override { return "CanvasVit(standardise, " + vit.describe() + ")"; }

  nn::VisionTransformer vit;
  vision::PixelStatistics pixels;
};

// The same labels given to other canvases: row i of the labels becomes row perm(i), so each
// class keeps its frequency but no longer says what is on the canvas (Adebayo et al.'s data
// randomisation test). The images are shared, not copied.
vision::CanvasSet with_shuffled_labels(const vision::CanvasSet& set, std::uint64_t seed);

// Copies the parameters whose names start with one of `prefixes` (a whole dotted component:
// "vit.layers.1" is not a prefix of "vit.layers.10.x") from `from` into `to`, which must have
// the same names and shapes; every parameter when prefixes is empty. Returns how many tensors
// were copied.
Index copy_parameters(nn::Module& to, const nn::Module& from,
                      const std::vector<std::string>& prefixes = {});

// ---- (b) the maps: image_maps.cpp -------------------------------------------------------------

// The methods, in the order of the table. The raw attention of each head follows them, one
// row per head (row kMethods + h), so a table has method_count(heads) rows.
enum Method : int {
  kRawMean,        // last layer, class token's row, mean of the heads
  kRollout,        // Abnar & Zuidema 2020, heads averaged
  kRolloutMax,     // the same, heads fused by their maximum
  kFlow,           // max-flow through the layers (first flow_canvases canvases only)
  kRelevance,      // Chefer et al. 2021b: R += mean_h (grad A * A)^+ R
  kGradCam,        // Selvaraju et al. 2017 on the last layer's input tokens
  kGradient,       // |dy/dx|, max over the colour channels (Simonyan et al. 2014)
  kInputGradient,  // x * dy/dx summed over the channels
  kRandom,         // uniform random pixels: knows nothing
  kEdge,           // the canvas's own edges (gradient magnitude of its brightness)
  kCnnCam,         // lesson 08's CNN: CAM on its 8x8 grid
  kCnnGradCam,     // lesson 08's CNN: Grad-CAM on its 16x16 grid (block 2)
  kMethods
};
Index method_count(Index heads);
std::string method_name(Index row);
bool uses_cnn(Index row);           // scored with the CNN's probability (else the ViT's)
bool model_independent(Index row);  // the two baselines

// Every method's maps of a batch of pairs: maps[row] is float64 [B, h, w] at the method's
// own resolution (the patch grid, the CNN's grid, or the S x S pixels), or undefined for a
// method not computed on this batch (flow without with_flow, the CNN's without a CNN).
struct MapBatch {
  std::vector<NDArray> maps;
};
// images [B, 3, S, S] with one class each. flow[b]: compute attention flow (slow) for image
// b (empty: for none); the flow maps of the others are left at 0.
MapBatch vit_maps(CanvasVit& model, const NDArray& images, const std::vector<Index>& classes,
                  const std::vector<bool>& flow = {});
void add_baseline_maps(MapBatch& batch, const NDArray& images, Generator& gen);
void add_cnn_maps(MapBatch& batch, vision::CamClassifier& cnn, const NDArray& images,
                  const std::vector<Index>& classes);
// vit_maps and add_cnn_maps, the images taken a few at a time (each image's maps depend on
// that image alone: the same maps, with the activations of a few images held at once).
MapBatch model_maps(CanvasVit& vit, vision::CamClassifier& cnn, const NDArray& images,
                    const std::vector<Index>& classes, const std::vector<bool>& flow);
// The edge map of images [B, C, S, S]: |grad I| of the brightness I (the channels' mean),
// central differences inside, one-sided at the border. float64 [B, S, S].
NDArray edge_maps(const NDArray& images);
// Map b of a batch as a float64 [h, w].
NDArray map_of(const NDArray& maps, Index b);

// ---- (c) scores: image_scores.cpp -------------------------------------------------------------

// A map [h, w] summed over the cells of each patch of a grid x grid patch grid (h and w
// multiples of grid): the relevance of each patch, row-major, for the deletion curves.
std::vector<double> patch_relevance(const NDArray& map, Index grid);

// images [3, S, S] with the patches of a grid x grid grid that are not kept set to `fill`.
NDArray keep_patches(const NDArray& image, const std::vector<bool>& kept, Index grid, double fill);

// The deletion and insertion curves (interpret/faithfulness.h) of several relevance rankings
// of one image [3, S, S]: relevance[r] has one value per patch of the grid x grid grid (empty:
// no curves for r). The score is the model's class probability sigmoid(logit[label]) with the
// removed patches set to `fill`; the masked images go through the model in batches.
struct CurvePair {
  interpret::PerturbationCurve deletion, insertion;
};
std::vector<CurvePair> perturbation_curves(nn::UnaryModule& model, const NDArray& image,
                                           Index label,
                                           const std::vector<std::vector<double>>& relevance,
                                           Index grid, double fill, Index steps);

// One map [h, w] (at its method's resolution) against the boxes: the pointing game (its
// largest pixel, once upsampled to size x size, within tolerance pixels of a box) and the
// share of its mass inside the boxes (shifted to be non-negative, as the figures show it).
struct BoxScore {
  bool hit = false;
  double mass = 0;
};
BoxScore box_score(const NDArray& map, const std::vector<data::Box>& boxes, Index size,
                   double tolerance);

struct ScoreOptions {
  double tolerance = 2;
  Index flow_canvases = 100;
  Index curve_pairs = 30;
  Index curve_steps = 8;
  Index batch = 50;  // pairs per forward/backward pass
  std::uint64_t seed = 0;
};

struct MethodScore {
  interpret::PointingTally pointing;
  Index pairs = 0;                     // pairs scored (flow: on the first canvases only)
  double deletion = 0, insertion = 0;  // mean area under the curve over the curve pairs
  Index curves = 0;                    // how many pairs have curves
  std::vector<double> deletion_curve = {}, insertion_curve = {};  // mean score at each point
};
struct ImageScores {
  std::vector<vision::ClassOnCanvas> pairs;
  std::vector<MethodScore> methods;          // one per row
  interpret::PointingTally random_expected;  // the hit area share: a random point's chance
  double fill = 0;                           // the value of a removed pixel
};
ImageScores score_methods(CanvasVit& vit, vision::CamClassifier& cnn, const vision::CanvasSet& set,
                          const ScoreOptions& options);

// ---- (d) sanity checks: image_sanity.cpp ------------------------------------------------------

// Cascading randomisation from the top (Adebayo et al. 2018, section 3.1): step k
// re-initialises part k and keeps the parts before it randomised.
struct CascadeStep {
  std::string name;                   // what is randomised at this step
  std::string column;                 // its short title in the tables
  std::vector<std::string> prefixes;  // the parameters' names
};
// heads, ln, layers.L-1, ..., layers.0, the positions and class token, conv_proj.
std::vector<CascadeStep> cascade_steps(const CanvasVit& model);

struct SanityOptions {
  Index pairs = 30;
  std::uint64_t seed = 0;
};
// rho[step][row]: the mean over pairs of the Spearman correlation between the trained model's
// map and the randomised model's map (absolute values, or signed); step 0 is the trained
// model against itself (1 for deterministic maps; the random map's is about 0).
struct SanityCurves {
  std::vector<std::string> steps;  // the steps' columns ("none" first)
  std::vector<std::vector<double>> rho_abs, rho_signed;
};
SanityCurves cascading_randomisation(const CanvasVit& trained, const vision::CanvasSet& set,
                                     const SanityOptions& options);
// One comparison: the trained model against another model of the same shape (trained on
// shuffled labels): rho_abs[0], rho_signed[0] per row.
SanityCurves compare_models(CanvasVit& trained, CanvasVit& other, const vision::CanvasSet& set,
                            const SanityOptions& options);

// ---- (e) figures: image_figures.cpp -----------------------------------------------------------

// Every method's map (rows) of the first `count` pairs on different canvases (columns), over
// the canvases, with the class's boxes and each map's peak; written to png. Returns the same
// pairs as the viewer's examples (docs/viewer.md): the canvas, the boxes, and every method's
// map with its pointing game hit (within tolerance pixels) and mass in the boxes.
std::vector<viz::AttentionExample> write_method_figure(const std::string& png, CanvasVit& vit,
                                                       vision::CamClassifier& cnn,
                                                       const vision::CanvasSet& set,
                                                       const std::vector<std::string>& class_names,
                                                       Index count, std::uint64_t seed,
                                                       double tolerance);

// ---- the program's sections: image_sections.cpp ----------------------------------------------

// The canvases of the flags (--canvas-*, --seed, --synthetic, --data).
vision::CanvasDataOptions canvas_data_options(const Options& o);
// Section 1: the canvases (vision/), with their class counts.
vision::CanvasData section_canvases(app::Transcript& t, const Options& o);
// Section 2: lesson 08's CNN and the ViT trained on the same canvases; their test scores.
void section_classifiers(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                         vision::CamClassifier& cnn, CanvasVit& vit);
// Section 3: every method scored; maps.csv, deletion.png, insertion.png.
void section_map_scores(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                        vision::CamClassifier& cnn, CanvasVit& vit);
// Section 4: maps.png.
void section_method_figure(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                           vision::CamClassifier& cnn, CanvasVit& vit);
// Section 5: cascading randomisation and shuffled labels; sanity.csv, sanity.png. The
// training canvases (d.train, freed after section 2) are made again for the second ViT.
void section_sanity(app::Transcript& t, const Options& o, const vision::CanvasData& d,
                    CanvasVit& vit);

}  // namespace attend::lesson13
