// Lesson 13's program: its flags, every hyper-parameter with the flag that changes it. Part 1
// (a Vision Transformer on the canvases) and part 2 (lesson 11's Transformer on dates) each
// have a block of their own.
#pragma once

#include <cstdint>
#include <string>

#include "attend.h"

namespace attend::lesson13 {

struct Options : app::Flags {
  std::uint64_t seed =
      flag(seed, "seed", 0, "seed of the data, initial weights, batch order and random maps");
  std::string out = flag(out, "out", "output/13_reading_attention",
                         "folder for summary.txt, the CSV files and the figures");

  // ---- Part 1: a Vision Transformer on the canvases (images.h) ------------------------------
  bool images = flag(images, "images", true, "run part 1: a ViT on the canvases, its maps read");
  bool synthetic = flag(synthetic, "synthetic", false,
                        "part 1: generated pictures instead of Fashion-MNIST on the canvases");
  std::string data =
      flag(data, "data", data::kFashionMnistFolder, "folder with the Fashion-MNIST files");
  Index canvas_train =
      flag(canvas_train, "canvas-train", 4000, "training canvases", app::at_least<Index>(1));
  Index canvas_validation =
      flag(canvas_validation, "canvas-validation", 300,
           "validation canvases, scored after every epoch", app::at_least<Index>(1));
  Index canvas_test = flag(canvas_test, "canvas-test", 600,
                           "held-out canvases: accuracy, the maps' scores, the sanity checks",
                           app::at_least<Index>(1));
  // The ViT (nn/vision_transformer.h) and its training.
  Index vit_patch =
      flag(vit_patch, "vit-patch", 8, "ViT patch side in pixels (must divide the canvas side, 64)",
           app::at_least<Index>(1));
  Index vit_layers =
      flag(vit_layers, "vit-layers", 4, "ViT encoder layers", app::at_least<Index>(1));
  Index vit_heads =
      flag(vit_heads, "vit-heads", 4, "ViT attention heads per layer", app::at_least<Index>(1));
  Index vit_dim = flag(vit_dim, "vit-dim", 64, "ViT token width D (a multiple of the heads)",
                       app::at_least<Index>(1));
  Index vit_mlp = flag(vit_mlp, "vit-mlp", 128, "hidden width of each ViT layer's MLP",
                       app::at_least<Index>(1));
  int vit_epochs =
      flag(vit_epochs, "vit-epochs", 8, "ViT: passes over the training canvases", app::at_least(1));
  Index vit_batch =
      flag(vit_batch, "vit-batch", 16, "ViT: canvases per training step", app::at_least<Index>(1));
  double vit_lr = flag(vit_lr, "vit-lr", 2e-3,
                       "ViT: Adam's peak learning rate (cosine decay to a tenth)", app::above(0.0));
  // Lesson 08's CNN, trained on the same canvases as the reference.
  int cnn_epochs =
      flag(cnn_epochs, "cnn-epochs", 3, "CNN: passes over the training canvases", app::at_least(1));
  double cnn_lr = flag(cnn_lr, "cnn-lr", 5e-3, "CNN: Adam's peak learning rate", app::above(0.0));
  // The maps' scores.
  double tolerance =
      flag(tolerance, "tolerance", 2.0, "pointing game: pixels the maximum may lie outside a box",
           app::at_least(0.0));
  Index flow_canvases = flag(flow_canvases, "flow-canvases", 100,
                             "attention flow (a max-flow per patch, slow) on these first test "
                             "canvases only",
                             app::at_least<Index>(0));
  Index curve_pairs = flag(curve_pairs, "curve-pairs", 30,
                           "deletion and insertion curves on these first (canvas, class) pairs",
                           app::at_least<Index>(0));
  Index curve_steps = flag(curve_steps, "curve-steps", 8,
                           "steps of the deletion and insertion curves", app::at_least<Index>(1));
  // The sanity checks.
  Index sanity_pairs =
      flag(sanity_pairs, "sanity-pairs", 30,
           "sanity checks: (canvas, class) pairs whose maps are compared", app::at_least<Index>(2));
  int shuffled_epochs = flag(shuffled_epochs, "shuffled-epochs", 2,
                             "epochs of the ViT trained on shuffled labels", app::at_least(1));
  int image_figures = flag(image_figures, "image-figures", 4,
                           "test canvases drawn with every method's map", app::at_least(0));

  // ---- Part 2: lesson 11's Transformer on dates (dates.h, on the dates13 branch) -------------

  bool progress = flag(progress, "progress", true, "progress lines on stderr");
};

}  // namespace attend::lesson13
