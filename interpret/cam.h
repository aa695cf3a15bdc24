// Where does a classifier see the class? Two answers, computed from arrays so that any model
// can use them: lesson 08's CNN (vision/cam_classifier.h) and whatever comes after it.
//
// CAM (Zhou et al. 2016). For a head "global average pooling, then linear" the class score
// is s_c = sum_k w_k^c F_k + b_c with F_k the mean of feature map f_k. Swap the sum over k
// and the mean over the grid:
//     s_c - b_c = mean over (x, y) of M_c(x, y),   M_c(x, y) = sum_k w_k^c f_k(x, y).
// M_c says how much each grid cell adds to the score of class c: the class activation map.
//
// Grad-CAM (Selvaraju et al. 2017) needs only gradients, so it works for any head and any
// layer: weigh each feature map A^k by the average gradient of the class score y^c (the
// logit, before the sigmoid or softmax) with respect to it, then keep the positive part:
//     alpha_k^c = (1/Z) sum_{i,j} dy^c / dA^k_ij        (Z = h * w cells)   eq. (1)
//     L^c       = ReLU(sum_k alpha_k^c A^k)                                 eq. (2)
// For a GAP + linear head dy^c/dA^k_ij = w_k^c / Z at every cell of the last grid, so
// alpha_k^c = w_k^c / Z and L^c = ReLU(M_c) / Z: Grad-CAM is CAM, rescaled, without its
// negative part.
#pragma once

#include <vector>

#include "tensor/ndarray.h"

namespace attend::interpret {

// CAM: M_c(x, y) = sum_k w_k^c f_k(x, y), the class's linear layer applied at every grid
// cell instead of to the average. features [B, K, h, w], weight [classes, K] (PyTorch's
// nn.Linear weight), one class per image -> maps float64 [B, h, w]. The bias is left out, as
// in the paper: mean over (x, y) of M_c = s_c - b_c.
NDArray class_activation_maps(const NDArray& features, const NDArray& weight,
                              const std::vector<Index>& classes);

// Grad-CAM from a feature map A and the gradient dy^c/dA of each image's class score with
// respect to it (eqs. 1-2 above): features, gradients [B, K, h, w] -> maps float64 [B, h, w].
NDArray grad_cam_from_gradients(const NDArray& features, const NDArray& gradients);

// Counterfactual Grad-CAM (Selvaraju et al. 2017, "Counterfactual Explanations"): negate the
// gradients, so the map shows the regions whose features argue against the class:
//   L^c_counterfactual = ReLU(sum_k (-alpha_k^c) A^k)
NDArray counterfactual_grad_cam_from_gradients(const NDArray& features, const NDArray& gradients);

// A map grid [h, w] resized bilinearly to size x size (float64), as the overlays show it.
NDArray upsample_map(const NDArray& grid, Index size);

}  // namespace attend::interpret
