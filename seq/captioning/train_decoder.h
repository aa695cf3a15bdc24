// Training a caption decoder on the frozen encoder's regions: Adam, minibatches of shuffled
// canvases, the learning rate along a cosine, the gradient norm clipped, the progress line
// and one CSV row per epoch. The loss of a step is soft attention's unless the caller passes
// its own (lesson 10's hard attention).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "seq/captioning/caption_loss.h"
#include "seq/captioning/region_file.h"

namespace attend::captioning {

// The defaults are lesson 09's (its main.cpp has a flag for each).
struct CaptionTrainOptions {
  int epochs = 6;
  Index batch = 64;
  double lr = 3e-3;      // Adam's at the start; a cosine takes it to a tenth by the end
  double lambda = 0.0;   // weight of the doubly stochastic regulariser
  double clip = 5.0;     // gradient-norm clipping
  std::string log_path;  // CSV of per-epoch losses ("" for none)
  bool progress = true;  // the progress line on stderr (false: none)
};
struct CaptionEpoch {
  int epoch = 0;
  double loss = 0, nll = 0, penalty = 0;  // training means
  double validation_word_accuracy = 0;
};
// One training step's loss on a batch: what the loop minimises. Lesson 10 passes its own.
using StepLoss = std::function<CaptionLoss(const Tensor& regions, const CaptionBatch& batch)>;
std::vector<CaptionEpoch> train_decoder(CaptionDecoder& decoder, const RegionFile& train_regions,
                                        const std::vector<CanvasExample>& train,
                                        const NDArray& validation_regions,
                                        const std::vector<CanvasExample>& validation,
                                        const Vocabulary& vocab, const CaptionTrainOptions& options,
                                        Generator& gen, const StepLoss& step_loss = {});

}  // namespace attend::captioning
