// What a training run did, said in a transcript and drawn: one line per epoch, how it ended,
// and the loss and validation curves.
#pragma once

#include <string>

#include "app/transcript.h"
#include "seq/training.h"

namespace attend::seq {

// Prints one line per epoch (training loss, validation score as a percentage, e.g.
// "validation exact match 97.3%") and how the training ended, and draws both curves into
// `png`, the score on the right axis. `score` names the validation score.
void report_training(app::Transcript& t, const TrainingResult& r, const std::string& png,
                     const std::string& title, const std::string& score = "exact match");

}  // namespace attend::seq
