// Lesson 08's program: its flags, and the sections main.cpp runs that have files of their own
// (section_data.cpp, section_pointing.cpp, section_figures.cpp).
#pragma once

#include <string>
#include <vector>

#include "attend.h"
#include "lesson.h"

namespace attend::lesson08 {

// Every hyper-parameter, each with the flag that changes it.
struct Options : app::Flags {
  std::uint64_t seed =
      flag(seed, "seed", 0, "seed of the canvases, initial weights, batch order and random maps");
  Index train =
      flag(train, "train", CanvasDataOptions{}.train, "training canvases", app::at_least<Index>(1));
  Index validation = flag(validation, "validation", CanvasDataOptions{}.validation,
                          "validation canvases, scored after every epoch", app::at_least<Index>(1));
  Index test =
      flag(test, "test", CanvasDataOptions{}.test,
           "held-out canvases for the final scores and the pointing game", app::at_least<Index>(1));
  int epochs = flag(epochs, "epochs", TrainOptions{}.epochs, "passes over the training canvases",
                    app::at_least(1));
  Index batch = flag(batch, "batch", TrainOptions{}.batch, "canvases per training step",
                     app::at_least<Index>(1));
  double lr = flag(lr, "lr", TrainOptions{}.lr,
                   "Adam's peak learning rate (cosine decay to a tenth of it)", app::above(0.0));
  double tolerance =
      flag(tolerance, "tolerance", PointingOptions{}.tolerance,
           "pointing game: pixels the maximum may lie outside a box", app::at_least(0.0));
  int figures = flag(figures, "figures", 6, "test canvases drawn with their maps in maps.png",
                     app::at_least(0));
  bool standardize =
      flag(standardize, "standardize", true,
           "standardise the input pixels and start the class biases at the priors' log-odds");
  bool synthetic =
      flag(synthetic, "synthetic", false, "use generated pictures instead of Fashion-MNIST");
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
  std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
  std::string out = flag(out, "out", "output/08_cnn_cam",
                         "folder for summary.txt, the CSV files and the figures");
};

// Figures magnify the 64-pixel canvases this many times.
constexpr Index kZoom = 2;

// The canvases the flags ask for: section 1 makes them, and the saved CNN's file name
// records them.
inline CanvasDataOptions canvas_options(const Options& o) {
  return {.train = o.train,
          .validation = o.validation,
          .test = o.test,
          .seed = o.seed,
          .synthetic = o.synthetic,
          .folder = o.data};
}

// Section 1 (section_data.cpp): the canvases, their classes and boxes; canvases.png.
CanvasData section_data(app::Transcript& t, const Options& o);
// Section 6 (section_pointing.cpp): the pointing game's scores; pointing_game.png and
// pointing_pairs.csv.
void section_pointing(app::Transcript& t, const Options& o, const PointingResults& p,
                      const std::vector<std::string>& names);
// Section 7 (section_figures.cpp): maps.png.
void section_figures(app::Transcript& t, const Options& o, CamClassifier& model,
                     const CanvasData& d);

}  // namespace attend::lesson08
