// The public interface of attend: include this one header.
//
//   tensor/    NDArray, the data, and the kernels that compute with it
//   autograd/  Tensor, the graph, backward(), gradcheck
#pragma once

#include "tensor/dtype.h"
#include "tensor/elementwise.h"
#include "tensor/error.h"
#include "tensor/index_ops.h"
#include "tensor/matmul.h"
#include "tensor/ndarray.h"
#include "tensor/print.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/shape.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

#include "autograd/gradcheck.h"
#include "autograd/graphviz.h"
#include "autograd/ops.h"
#include "autograd/tensor.h"
