// Attention masks: which keys a query may attend to.
//
// PyTorch tells a boolean mask from an additive one by its dtype, and the two meanings of a
// boolean mask differ between its functions (in nn.MultiheadAttention True means "may NOT
// attend"; in F.scaled_dot_product_attention True means "may attend"). attend has no bool
// dtype, so a Mask says how its numbers are read:
//
//   Mask::blocked(m)   nonzero = may NOT attend   (nn.MultiheadAttention's bool masks)
//   Mask::keep(m)      nonzero = may attend       (F.scaled_dot_product_attention's bool mask)
//   Mask::additive(m)  added to the scores, -inf blocks  (PyTorch's float masks)
//
// A blocked key gets exactly zero weight and sends back exactly zero gradient. A query whose
// keys are ALL blocked gets all-zero weights and a zero output (PyTorch returns NaN there):
// padding queries then stay finite and need no special case.
#pragma once

#include "autograd/tensor.h"

namespace attend::nn {

class Mask {
 public:
  Mask() = default;  // masks nothing
  static Mask blocked(const Tensor& blocked);
  static Mask keep(const Tensor& keep);
  static Mask additive(const Tensor& additive);

  bool defined() const { return keep_.defined(); }
  const Shape& shape() const { return keep_.shape(); }

  // The same mask as 1 (may attend) / 0 (blocked), and as the finite part of an additive
  // mask (0 for a boolean mask). The attention weights are masked_softmax(scores + bias, keep).
  const Tensor& keep_values() const { return keep_; }
  const Tensor& bias() const { return bias_; }  // undefined for a boolean mask

  // The mask with new axes in front (a [Tq, Tk] mask viewed as [1, 1, Tq, Tk]) or another
  // shape with the same elements.
  Mask reshaped(const Shape& shape) const;
  // Both masks at once: a key is kept when both keep it, the biases add.
  Mask combined_with(const Mask& other) const;

 private:
  Tensor keep_;  // float 0/1
  Tensor bias_;  // float, finite; undefined when the mask has no additive part
};

// The mask that lets position t attend to positions 0..t only (a decoder must not see the
// future): [T, T], blocked above the diagonal. PyTorch builds the same mask with
// nn.Transformer.generate_square_subsequent_mask(T) (as -inf above the diagonal).
Mask causal_mask(Index T);

}  // namespace attend::nn
