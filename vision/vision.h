// vision/: classifying images, what the canvas classifiers of lessons 08, 13 and 14 share.
//
//   canvas_set.h   canvases of 1-3 Fashion-MNIST items as a multi-label data set (which
//                  classes are on each canvas, and where), its three splits, pixel statistics
#pragma once

#include "vision/canvas_set.h"
