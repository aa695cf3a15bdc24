// The differentiable operations on Tensors. Each has the same meaning as the NDArray
// function of the same name in tensor/ (which computes its value); the .cpp files in this
// folder show, next to each forward, the backward formula with its derivative.
//
//   ops_elementwise.cpp   arithmetic, unary math, where / masked_fill, casts
//   ops_reduce.cpp        sum, mean, max, logsumexp, softmax, log_softmax
//   ops_shape.cpp         reshape, permute, slice, concat, broadcast_to, ...
//   ops_index.cpp         index_select (embeddings), gather
//   ops_matmul.cpp        matmul
//
// docs/ops.md lists every op in one table (these and the ones nn/ makes): where its forward
// and backward are, its derivative in one line, and the gradcheck test case that covers it.
#pragma once

#include <vector>

#include "autograd/tensor.h"

namespace attend {

// ---- elementwise (binary ops broadcast like NumPy) ---------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact: x * Phi(x)
// PyTorch's gelu(x, approximate="none" | "tanh"); tanh is the approximation of GPT-2 and
// BERT, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (op "gelu_tanh").
enum class GeluApproximation { none, tanh };
Tensor gelu(const Tensor& x, GeluApproximation approximate);
Tensor pow(const Tensor& x, double exponent);
Tensor clamp(const Tensor& x, double low, double high);
// a where cond != 0, b elsewhere; cond carries no gradient.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// x with `value` where mask != 0; the gradient there is 0.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
// A copy in another dtype; the gradient is converted back.
Tensor to_dtype(const Tensor& x, DType dtype);

// Comparisons: 1 where true, 0 where false. Not differentiable (no gradient flows).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

// ---- reductions and normalisations -------------------------------------------------------
Tensor sum(const Tensor& x);  // all elements, to a 0-d tensor
Tensor mean(const Tensor& x);
Tensor sum(const Tensor& x, int axis, bool keepdim = false);
Tensor mean(const Tensor& x, int axis, bool keepdim = false);
Tensor max(const Tensor& x, int axis, bool keepdim = false);  // gradient goes to the argmax
Tensor logsumexp(const Tensor& x, int axis, bool keepdim = false);
Tensor argmax(const Tensor& x, int axis, bool keepdim = false);  // int64, not differentiable
Tensor softmax(const Tensor& x, int axis);
Tensor log_softmax(const Tensor& x, int axis);

// ---- shape ---------------------------------------------------------------------------------
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor reshape(const Tensor& x, std::initializer_list<Index> sizes);  // one size may be -1
Tensor permute(const Tensor& x, std::initializer_list<int> axes);
Tensor transpose(const Tensor& x, int axis0 = -2, int axis1 = -1);
Tensor squeeze(const Tensor& x, int axis);
Tensor unsqueeze(const Tensor& x, int axis);
Tensor flatten(const Tensor& x, int start_axis = 0, int end_axis = -1);
Tensor slice(const Tensor& x, int axis, Index start, Index stop, Index step = 1);
Tensor concat(std::span<const Tensor> parts, int axis);
Tensor concat(std::initializer_list<Tensor> parts, int axis);
Tensor stack(std::span<const Tensor> parts, int axis);
Tensor stack(std::initializer_list<Tensor> parts, int axis);
std::vector<Tensor> split(const Tensor& x, std::span<const Index> sizes, int axis);
std::vector<Tensor> chunk(const Tensor& x, Index chunks, int axis);  // equal pieces
// x cut along `axis` into its size-1 slices, with that axis removed: a [B, T, D] sequence
// becomes T tensors [B, D]. Unlike T separate slices, the backward costs one pass over x.
std::vector<Tensor> unbind(const Tensor& x, int axis);
Tensor broadcast_to(const Tensor& x, const Shape& shape);

// ---- indexing (indices are int64 tensors) --------------------------------------------------
Tensor index_select(const Tensor& x, int axis, const Tensor& index);
Tensor gather(const Tensor& x, int axis, const Tensor& index);

// ---- matrix product ------------------------------------------------------------------------
Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace attend
