// Everything in nn/optim/: optimizers, gradient clipping, learning-rate schedules and fit,
// the training loop.
#pragma once

#include "nn/optim/adam.h"
#include "nn/optim/clip.h"
#include "nn/optim/fit.h"
#include "nn/optim/optimizer.h"
#include "nn/optim/schedule.h"
#include "nn/optim/sgd.h"
