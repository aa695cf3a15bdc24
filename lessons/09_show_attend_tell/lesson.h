// Lesson 09: Show, Attend and Tell (Xu et al. 2015), soft attention. The model, its training
// and its scores are the library's (seq/captioning/, namespace attend::captioning: the region
// encoder and its pre-training, the decoder, the loss, greedy and beam decoding, the scores)
// and interpret/localisation.h (where the attention looks). This folder holds the program:
//
//   main.cpp       the flags and the chapter's sections in order (docs/09_show_attend_tell.md)
//   report.cpp     what each section prints
//   figures.cpp    the training curves, the attention strips and the learner's own image
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson09 {

using namespace attend::captioning;

// The canvases' and the encoder's flags (captioning::CanvasFlags), then the decoder's and this
// lesson's own: each with its flag, default, help and range.
struct Options : CanvasFlags {
  // Twice 12,000 canvases for 6 epochs beat 12 epochs of 12,000.
  Options() : CanvasFlags(24000) {}

  int epochs = flag(epochs, "epochs", 6, "epochs of decoder training", app::at_least(1));
  Index batch = flag(batch, "batch", 64, "captions per batch", app::at_least<Index>(1));
  // Adam's, for the decoder, along a cosine to a tenth of itself.
  double lr = flag(lr, "lr", 3e-3, "Adam learning rate of the decoder", app::above(0.0));
  double lambda = flag(lambda, "lambda", 0.0, "weight of the doubly stochastic regulariser",
                       app::at_least(0.0));
  double compare_lambda = flag(compare_lambda, "compare-lambda", 1.0,
                               "lambda of the second row of the lambda table", app::at_least(0.0));
  bool lambda_table =
      flag(lambda_table, "lambda-table", true, "train a second decoder for the lambda table");
  bool init = flag(init, "init", true, "f_init from the mean region (--no-init: from zeros)");
  bool gate = flag(gate, "gate", true, "the gating scalar beta (--no-gate: beta = 1)");
  // The authors: 0.5; why 0.3 here: docs/09, "How we got here".
  double dropout =
      flag(dropout, "dropout", 0.3, "dropout probability on h_t in the deep output (training only)",
           app::between(0.0, 1.0));
  bool lstm_sees_content =
      flag(lstm_sees_content, "lstm-sees-content", false,
           "feed all of z_t to the LSTM, as the paper does (default: only where it looked)");
  Index beam = flag(beam, "beam", 3, "beam width (1 = greedy)", app::at_least<Index>(1));
  Index strips = flag(strips, "strips", 500, "how many test captions get a PNG strip",
                      app::at_least<Index>(0));
  std::string image = flag(image, "image", "", "a picture (PNG, JPEG, BMP, ...) to caption");
  std::string out = flag(out, "out", "output/09_show_attend_tell",
                         "folder for summary.txt, CSV logs, plots and strips");
};

// The strips show the 64x64 canvas at this size, so that one cell is 16 pixels wide.
constexpr Index kStripPixels = 128;

// ---- report.cpp: what the sections print -----------------------------------------------------

// Sections 1 and 2: the canvases, and the encoder pre-trained (or loaded) and frozen.
PreparedCanvases prepare(app::Transcript& t, const Options& o, RegionEncoder& encoder);
// The decoder's sizes for these canvases and flags.
CaptionDecoderSizes sizes_for(const PreparedCanvases& d, const Options& o);
// A decoder trained with this lambda: its epochs, and how long it took.
struct Training {
  double lambda = 0;
  std::string log_name;  // the CSV log is <out>/<log_name>.csv
  std::vector<CaptionEpoch> records;
  double seconds = 0;
};
// Trains a decoder, with or without the progress line. Prints nothing: two decoders may train
// side by side.
Training train(const Options& o, const PreparedCanvases& d, CaptionDecoder& decoder, double lambda,
               Generator& gen, const std::string& log_name, bool progress);
// Each epoch's losses and validation word accuracy, and the time.
void print_training(app::Transcript& t, const Options& o, const Training& training);
// Section 4: the scores of greedy and beam captions, the targets, the mistakes.
void section_captions(app::Transcript& t, const Options& o, const CaptionScores& greedy,
                      const CaptionScores& beam);
// Sections 5 and 6: where the attention looks, and that it moves with the word.
void section_where(app::Transcript& t, const CaptionScores& s,
                   const std::vector<CanvasExample>& test);
// The mean gate beta at object words and at the grammar's words.
void section_gate(app::Transcript& t, CaptionDecoder& decoder, const PreparedCanvases& d);
// Section 7: the lambda table, rows (lambda, scores).
void lambda_table(app::Transcript& t,
                  const std::vector<std::pair<double, CaptionScores>>& rows_by_lambda);

// ---- figures.cpp -----------------------------------------------------------------------------

// training.png: the caption nll and the validation word accuracy per epoch.
void plot_training(const std::vector<CaptionEpoch>& records, const std::string& out);
// Section 8: one attention strip per test caption (beam decoding), into <out>/strips.
void write_strips(app::Transcript& t, const Options& o, CaptionDecoder& decoder,
                  const PreparedCanvases& d);
// Section 9: the learner's own picture, captioned, and its strip.
void caption_image(app::Transcript& t, const Options& o, const NDArray& picture,
                   RegionEncoder& encoder, CaptionDecoder& decoder, const PreparedCanvases& d);

}  // namespace attend::lesson09
