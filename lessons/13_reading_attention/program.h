// Lesson 13's program: its flags, every hyper-parameter with the flag that changes it. Part 1
// (a Vision Transformer on the canvases) and part 2 (lesson 11's Transformer on dates) each
// have a block of their own; the dates' flags all start with --dates, part 1's name their part
// (--canvas-*, --vit-*, --cnn-*, ...).
#pragma once

#include <cstdint>
#include <string>

#include "attend.h"

namespace attend::lesson13 {

// Where lesson 11 (run before this one, in course order) saves its trained model.
inline const std::string kLesson11Model = "output/11_transformer/transformer.ckpt";
// Where lesson 08 saves its trained CNN (the file's name says how it was trained).
inline const std::string kLesson08Folder = "output/08_cnn_cam";

struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0,
                            "seed of the data, initial weights and random maps (part 2: must be "
                            "lesson 11's, whose test dates it reads)");
  std::string out = flag(out, "out", "output/13_reading_attention",
                         "folder for summary.txt, the CSV files and the plots");

  // ---- Part 1: a Vision Transformer on the canvases (images.h) ------------------------------
  bool images = flag(images, "images", true, "run part 1: a ViT on the canvases, its maps read");
  bool synthetic = flag(synthetic, "synthetic", false,
                        "part 1: generated pictures instead of Fashion-MNIST on the canvases");
  std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
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
  // Lesson 08's CNN on the same canvases as the reference: lesson 08's trained model when it
  // was trained on these canvases with these settings, else trained here the same way.
  std::string cnn_from =
      flag(cnn_from, "cnn-from", kLesson08Folder,
           "folder of lesson 08's trained CNN, read if lesson 08 trained it on these canvases with "
           "these --cnn-* settings (else it is trained here); none: always train it here");
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

  // ---- Part 2: lesson 11's Transformer on dates (dates.h) -----------------------------------
  bool dates = flag(dates, "dates", true, "run part 2: lesson 11's Transformer on dates");
  std::string dates_model =
      flag(dates_model, "dates-model", kLesson11Model,
           "lesson 11's trained model; if this default file is missing, the model is trained "
           "here with a smaller budget; none: always train here");
  // The date task: lesson 11's flags, with its defaults (the same test dates).
  Index dates_train = flag(dates_train, "dates-train", 10000,
                           "training dates (lesson 11's --train-dates)", app::at_least<Index>(1));
  Index dates_validation =
      flag(dates_validation, "dates-validation", 1000,
           "validation dates (lesson 11's --validation-dates)", app::at_least<Index>(1));
  Index dates_test =
      flag(dates_test, "dates-test", 1000, "held-out test dates (lesson 11's --test-dates)",
           app::at_least<Index>(1));
  // The model: lesson 11's flags, with its defaults (a checkpoint must match them).
  Index dates_d_model = flag(dates_d_model, "dates-d-model", 64, "d_model (lesson 11's --d-model)",
                             app::at_least<Index>(1));
  Index dates_heads = flag(dates_heads, "dates-heads", 4, "attention heads (lesson 11's --heads)",
                           app::at_least<Index>(1));
  Index dates_layers = flag(dates_layers, "dates-layers", 2,
                            "encoder layers, and as many decoder layers (lesson 11's --layers)",
                            app::at_least<Index>(1));
  Index dates_ff = flag(dates_ff, "dates-ff", 256, "feed-forward size d_ff (lesson 11's --ff)",
                        app::at_least<Index>(1));
  std::string dates_positions = flag(dates_positions, "dates-positions", "sinusoidal",
                                     "positional encoding (lesson 11's --positions)",
                                     app::one_of({"sinusoidal", "learned", "none"}));
  bool dates_norm_first = flag(dates_norm_first, "dates-norm-first", false,
                               "pre-norm layers (lesson 11's --norm-first)");
  // Training here, without lesson 11's model: its recipe, a smaller budget.
  int dates_epochs = flag(dates_epochs, "dates-epochs", 20,
                          "without lesson 11's model: at most this many epochs", app::at_least(1));
  double dates_seconds =
      flag(dates_seconds, "dates-seconds", 60,
           "without lesson 11's model: time budget of the training here", app::above(0.0));
  double dates_stop_at =
      flag(dates_stop_at, "dates-stop-at", 0.98,
           "without lesson 11's model: validation exact match at which training stops",
           app::between(0.0, 1.0));
  // The measurements.
  double dates_carry =
      flag(dates_carry, "dates-carry", 0.01,
           "a head carries the alignment if masking it lowers a layer's alignment by this much",
           app::between(0.0, 1.0));
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
};

}  // namespace attend::lesson13
