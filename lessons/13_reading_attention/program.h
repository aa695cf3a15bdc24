// Lesson 13's program: its flags, every hyper-parameter with the flag that changes it. Part 1
// (a Vision Transformer on the canvases) and part 2 (lesson 11's Transformer on dates) each
// have a block of their own; the dates' flags all start with --dates.
#pragma once

#include <cstdint>
#include <string>

#include "attend.h"

namespace attend::lesson13 {

// Where lesson 11 (run before this one, in course order) saves its trained model.
inline const std::string kLesson11Model = "output/11_transformer/transformer.ckpt";

struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0,
                            "seed of the data, initial weights and random maps (part 2: must be "
                            "lesson 11's, whose test dates it reads)");
  std::string out = flag(out, "out", "output/13_reading_attention",
                         "folder for summary.txt, the CSV files and the plots");

  // ---- Part 1: a Vision Transformer on the canvases (to come) -------------------------------

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
  bool progress = flag(progress, "progress", true, "progress lines on stderr");
};

}  // namespace attend::lesson13
