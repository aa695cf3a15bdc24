// Grad-CAM (Selvaraju et al. 2017) of CamClassifier at the output of one of its encoder
// blocks: the gradient of each image's class logit with respect to that output, turned into a
// map by interpret::grad_cam_from_gradients (interpret/cam.h has the equations, CAM itself,
// the counterfactual variant and upsample_map; they work from arrays, for any model).
//
// On the last grid of this model dy^c/dA^k_ij = w_k^c / Z at every cell, so alpha_k^c =
// w_k^c / Z and L^c = ReLU(M_c) / Z: Grad-CAM is CAM, rescaled, without its negative part.
// On an earlier block's grid (16x16 after block 2) there is no CAM, but Grad-CAM exists.
#pragma once

#include <vector>

#include "tensor/ndarray.h"
#include "vision/cam_classifier.h"

namespace attend::vision {

// The encoder blocks whose output Grad-CAM reads: 3 is the 8x8 grid (the last one, where
// Grad-CAM equals CAM), 2 the 16x16 grid under it (where there is no CAM).
struct GradCam {
  NDArray features;   // A: block `block`'s output [B, K, h, w]
  NDArray gradients;  // dy^c/dA, with c each image's class (the logit, before the sigmoid)
  NDArray maps;       // float64 [B, h, w]
};
// Runs the model on images [B, 3, S, S] and backpropagates each image's class logit (one
// class per image) to the output of encoder block `block` (1, 2 or 3). The graph starts at
// that output (a fresh leaf) because dy/dA does not depend on anything computed before A.
// The result holds no graph: the maps are for reading, not for a loss. The backward also
// reaches the later blocks' parameters, whose gradients are then cleared (zero_grad): call it
// between training steps, not between a backward and its optimizer step.
GradCam grad_cam(CamClassifier& model, const NDArray& images, const std::vector<Index>& classes,
                 int block);

}  // namespace attend::vision
