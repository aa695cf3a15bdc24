// interpret/: reading attention maps, for any model that gives a map per image.
//
//   cam.h       where a CNN sees a class: CAM (Zhou et al. 2016), Grad-CAM (Selvaraju et
//               al. 2017) from features and gradients, and a map grid upsampled to pixels
//   pointing.h  a map scored against the true boxes: the pointing game (Zhang et al. 2016),
//               its random baseline, and the share of the map's mass inside the boxes
#pragma once

#include "interpret/cam.h"
#include "interpret/pointing.h"
