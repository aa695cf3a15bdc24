// Attention as a training signal: fixing a classifier that looks at the wrong thing (lesson
// 14). Two recipes, written for arrays and graphs so that any model with a class map can use
// them.
//
// GAIN, "Tell Me Where to Look" (Li et al. 2018). The class map A^c (Grad-CAM of the last
// conv layer, scaled to [0, 1]) stays in the graph, and two extra losses train through it:
//   soft mask         T(A^c) = sigmoid(omega (A^c - sigma))           (sigma 0.5, omega 10)
//   masked image      I*^c   = I - T(A^c) . I                         (. : per pixel)
//   attention mining  L_am   = (1/n) sum_c s^c(I*^c)   over the n classes on the image:
//                     with what the map covers erased, the class must no longer be seen, so
//                     the map has to cover all of the evidence for c, not only its easiest part
//   extra supervision L_e    = (1/n) sum_c mean over pixels of (A^c - H^c)^2, with H^c a
//                     pixel mask of the class's objects, on the few images that have one
//   total             L = L_cl + alpha L_am (+ omega_e L_e)           (alpha 1, omega_e 10)
// The gradient of L_am reaches the map through the soft mask (it is smooth, unlike a hard
// threshold) and the classifier through both streams, which share every weight.
//
// Adversarial erasing (Wei et al. 2017), not differentiable: train, compute each class's map,
// erase the most attended region (the pixels where the scaled map reaches a threshold,
// filled with the mean pixel), train a new classifier on the erased images, repeat; the union
// of the erased regions is the object the steps mined together.
#pragma once

#include <span>
#include <vector>

#include "autograd/tensor.h"
#include "nn/data/canvas.h"

namespace attend::interpret {

struct GainOptions {
  double sigma = 0.5;  // the soft mask's threshold on the scaled map
  double omega = 10;   // its steepness: T goes from 0.12 to 0.88 over sigma -/+ 0.2
};

// CAM in the graph: features [P, K, h, w], the head's weight [classes, K] and one class per
// row -> maps [P, h, w], M(x, y) = sum_k weight[c_p, k] features[p, k, x, y]. Differentiable in
// both (interpret::class_activation_maps in cam.h is the same map on arrays).
Tensor class_activation_maps(const Tensor& features, const Tensor& weight,
                             const std::vector<Index>& classes);

// ReLU, then each map divided by its maximum (+ 1e-8): maps [P, h, w] in [0, 1]. For the
// last grid of a GAP + linear head this is Grad-CAM (= ReLU(CAM) / Z), scaled to a maximum
// of 1, so that sigma means "half of the peak" on every map.
Tensor scale_maps(const Tensor& maps);

// The matrix U [size, grid] of bilinear resizing from grid to size pixels along one axis,
// the same weights as upsample_map (cam.h): U A U^T is the map A [grid, grid] upsampled.
NDArray bilinear_matrix(Index grid, Index size);
// Maps [P, grid, grid] -> [P, size, size] in the graph: U A U^T, two matrix products.
Tensor upsample_maps(const Tensor& maps, Index size);

// T(A) = sigmoid(omega (A - sigma)), for maps of any shape.
Tensor soft_mask(const Tensor& maps, const GainOptions& options = {});

// I* = I - T . I for images [P, C, H, W] and masks [P, H, W] (the same mask on every channel).
Tensor soft_erase(const Tensor& images, const Tensor& masks);

// L_am from the class logits of the masked images, one per (image, class) pair [P]: the
// mean of sigmoid(s^c(I*^c)). The probability, not the logit, so that the loss is bounded:
// a logit could be pushed to minus infinity by any weight that makes every masked image
// look empty, and L_am would swamp L_cl.
Tensor attention_mining_loss(const Tensor& masked_logits);

// L_e: the mean over pairs and pixels of (A - H)^2, maps and targets [P, H, W].
Tensor attention_extra_loss(const Tensor& maps, const Tensor& targets);

// H: float32 [size, size], 1 on the pixels inside any of the boxes, 0 elsewhere.
NDArray box_mask(const std::vector<data::Box>& boxes, Index size);

// Adversarial erasing, one step: images [B, C, H, W], regions [B, H, W] (nonzero: erase) ->
// a copy with every erased pixel set to fill[c] on channel c (the training images' mean
// pixel, so that an erased region looks like "nothing in particular").
NDArray erase_regions(const NDArray& images, const NDArray& regions, std::span<const double> fill);

// The region a scaled map [B, H, W] attends: float32 1 where map >= threshold, else 0.
NDArray attended_regions(const NDArray& scaled_maps, double threshold);

}  // namespace attend::interpret
