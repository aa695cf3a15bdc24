// Checkpoints: everything a training run needs to stop and later continue exactly where it
// was, in one file.
//
//   // every few hundred steps
//   save_checkpoint("run/model.ckpt", model, &optimizer, {step, gen.state()});
//
//   // in a new process: same model and optimizer types, then
//   TrainingState state = load_checkpoint("run/model.ckpt", model, &optimizer);
//   gen.set_state(state.rng);
//   for (std::int64_t step = state.step; step < total_steps; ++step) ...
//
// A checkpoint holds the model's parameters (by their dotted names), the optimizer's state
// and step count, the training step and one random generator's state. With all four
// restored, the continued run computes bit for bit what an uninterrupted run would have.
// (If the run draws from several generators, such as a DataLoader's and a dropout one,
// save the one in TrainingState::rng and restart the others from seeds at the same point,
// for example at the start of an epoch.)
//
// Saving is atomic: a crash in the middle of a save leaves the previous checkpoint intact.
// Loading checks the whole file and its fit to the model before it changes anything, and
// reports the first problem as one attend::Error: a truncated or corrupt file, a missing
// or unexpected parameter name, a shape or dtype that differs from the model's.
// The byte layout is in docs/checkpoint_format.md.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"
#include "nn/optim/optimizer.h"
#include "tensor/random.h"

namespace attend::nn {

struct TrainingState {
  std::int64_t step = 0;  // training steps done so far
  // The state of the generator that drives the run. Left as zeros if the run saves none;
  // never restore an all-zero state (xoshiro256** would then produce only zeros).
  Generator::State rng{};
};

// Writes model's parameters, the optimizer's state (if optimizer is not null) and state.
void save_checkpoint(const std::string& path, const Module& model,
                     const optim::Optimizer* optimizer = nullptr, const TrainingState& state = {});

// Reads a checkpoint into model and, if not null, optimizer, and returns the saved
// TrainingState. The model must have exactly the saved parameter names, shapes and dtypes.
// With optimizer == nullptr any saved optimizer state is ignored (loading a model to
// evaluate it); with an optimizer, the checkpoint must contain optimizer state.
TrainingState load_checkpoint(const std::string& path, Module& model,
                              optim::Optimizer* optimizer = nullptr);

}  // namespace attend::nn
