// Saliency from input gradients: which input values the class score y^c is most sensitive to.
// Computed from arrays (the input x and the gradient g = ∂y^c/∂x, from backward() on a model
// whose input tensor requires a gradient), so any model can use them.
//
// Gradient (Simonyan, Vedaldi & Zisserman 2014, "Deep Inside Convolutional Networks", eq. 3
// and section 3.1): the magnitude of the gradient, and for a colour image the largest over the
// channels:   M(i, j) = max_c |g(c, i, j)|.
// Input x gradient (Shrikumar et al. 2016; the "Gradient ⊙ Input" of Adebayo et al. 2018): the
// first-order Taylor share of each input value in the score, x * g, summed over the channels so
// that a pixel's (or a token's) share is the sum of its values' shares:
//   M(i, j) = sum_c x(c, i, j) g(c, i, j).
// The sign is kept: a negative value argues against the class. (Adebayo et al. note that x * g
// keeps the input's structure, edges, even for a model with random weights: a sanity check
// should show it.)
//
// The channel axis is an argument: 1 for images [B, C, H, W] (PyTorch's layout), -1 for token
// embeddings [B, T, E] (the "channels" of a token are its embedding's features). The result
// has that axis removed: [B, H, W] or [B, T], float64.
#pragma once

#include "tensor/ndarray.h"

namespace attend::interpret {

// max over the channel axis of |g|.
NDArray gradient_saliency(const NDArray& gradients, int channel_axis = 1);

// sum over the channel axis of x * g; inputs and gradients have the same shape.
NDArray input_x_gradient(const NDArray& inputs, const NDArray& gradients, int channel_axis = 1);

}  // namespace attend::interpret
