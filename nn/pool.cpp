// max_pool2d and avg_pool2d: each (sample, channel) plane is pooled on its own, so the planes
// are shared out to the threads (parallel_for) and every output and every input gradient is
// computed by one thread in a fixed order: the results are identical for any number of
// threads.
#include "nn/pool.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "tensor/parallel.h"

namespace attend::nn {
namespace {

struct PoolShape {
  Index planes = 0, height = 0, width = 0;  // x [B, C, H, W] seen as B*C planes of H x W
  Index kernel = 0, stride = 0;
  Index out_h = 0, out_w = 0;
  Index plane_size() const { return height * width; }
  Index out_plane_size() const { return out_h * out_w; }
};

PoolShape check_pool_shapes(const Tensor& x, Index kernel, Index stride, std::string_view op) {
  if (!x.defined()) fail("{}: the input is undefined", op);
  if (x.ndim() != 4) fail("{}: input must be [B, C, H, W], got {}", op, x.shape());
  if (kernel < 1) fail("{}: kernel size must be positive, got {}", op, kernel);
  if (stride < 1) fail("{}: stride must be positive, got {}", op, stride);
  if (kernel > x.size(2) || kernel > x.size(3))
    fail("{}: kernel {}x{} is larger than the input {} (H {}, W {}; there is no padding)", op,
         kernel, kernel, x.shape(), x.size(2), x.size(3));
  PoolShape s;
  s.planes = x.size(0) * x.size(1), s.height = x.size(2), s.width = x.size(3);
  s.kernel = kernel, s.stride = stride;
  s.out_h = (s.height - kernel) / stride + 1;
  s.out_w = (s.width - kernel) / stride + 1;
  return s;
}

// Planes per parallel_for grain: about 16k input elements, so that waking a thread pays off.
Index plane_grain(const PoolShape& s) {
  return std::max<Index>(1, 16384 / std::max<Index>(1, s.plane_size()));
}

// ---- max -----------------------------------------------------------------------------------

// The element max-pooling takes from a window: ">" keeps the first maximum on ties, and a
// NaN is taken, so that it is not hidden.
template <class T>
inline void take_larger(const T* xp, Index at, Index& best) {
  if (xp[at] > xp[best] || std::isnan(xp[at])) best = at;
}

// One row of 2x2 windows of stride 2, the pooling of every CNN in the course, written so that
// the compiler vectorises it: the maximum m of each window from selects, then the first of its
// four elements equal to m (the first maximum, as take_larger picks). Returns false if the
// rows hold a NaN; the caller then redoes the row with take_larger, which lets the NaN through.
// `omp simd` asks for the vectorisation that GCC's -O2 cost model declines (the stride-2 reads
// need shuffles): about 9x faster on a [32, 32, 64, 64] input.
template <class T>
bool max_pool_row_2x2(const T* upper, const T* lower, Index width, Index out_w, Index corner, T* y,
                      Index* argmax) {
  int has_nan = 0;
#pragma omp simd reduction(| : has_nan)
  for (Index ow = 0; ow < out_w; ++ow) {
    const T a = upper[2 * ow], b = upper[2 * ow + 1], c = lower[2 * ow], d = lower[2 * ow + 1];
    T m = b > a ? b : a;
    m = c > m ? c : m;
    m = d > m ? d : m;
    const Index offset = a == m ? 0 : b == m ? 1 : c == m ? width : width + 1;
    y[ow] = m;
    argmax[ow] = corner + 2 * ow + offset;
    has_nan |= (a != a) | (b != b) | (c != c) | (d != d);
  }
  return has_nan == 0;
}

// x [planes, H, W] -> y [planes, Ho, Wo], and argmax [planes, Ho, Wo]: the position
// (row * W + column) in its plane of the element each output took.
template <class T>
void max_pool_forward(const PoolShape& s, const T* x, T* y, Index* argmax) {
  const bool two_by_two = s.kernel == 2 && s.stride == 2;
  parallel_for(s.planes, plane_grain(s), [&](Index begin, Index end) {
    for (Index plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * s.plane_size();
      T* yp = y + plane * s.out_plane_size();
      Index* ap = argmax + plane * s.out_plane_size();
      for (Index oh = 0; oh < s.out_h; ++oh) {
        const Index top = oh * s.stride;
        if (two_by_two &&
            max_pool_row_2x2(xp + top * s.width, xp + (top + 1) * s.width, s.width, s.out_w,
                             top * s.width, yp + oh * s.out_w, ap + oh * s.out_w))
          continue;
        for (Index ow = 0; ow < s.out_w; ++ow) {
          const Index left = ow * s.stride;
          Index best = top * s.width + left;
          for (Index u = 0; u < s.kernel; ++u)
            for (Index v = 0; v < s.kernel; ++v)
              take_larger(xp, (top + u) * s.width + left + v, best);
          yp[oh * s.out_w + ow] = xp[best];
          ap[oh * s.out_w + ow] = best;
        }
      }
    }
  });
}

// g [planes, Ho, Wo] -> dx [planes, H, W] (zeroed by the caller): dx[argmax] += g
template <class T>
void max_pool_backward(const PoolShape& s, const T* g, const Index* argmax, T* dx) {
  parallel_for(s.planes, plane_grain(s), [&](Index begin, Index end) {
    for (Index plane = begin; plane < end; ++plane) {
      const T* gp = g + plane * s.out_plane_size();
      const Index* ap = argmax + plane * s.out_plane_size();
      T* dxp = dx + plane * s.plane_size();
      for (Index i = 0; i < s.out_plane_size(); ++i) dxp[ap[i]] += gp[i];
    }
  });
}

// ---- average -------------------------------------------------------------------------------

// x [planes, H, W] -> y [planes, Ho, Wo]: the sum of each window divided by kernel^2
template <class T>
void avg_pool_forward(const PoolShape& s, const T* x, T* y) {
  const T count = static_cast<T>(s.kernel * s.kernel);
  parallel_for(s.planes, plane_grain(s), [&](Index begin, Index end) {
    for (Index plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * s.plane_size();
      T* yp = y + plane * s.out_plane_size();
      for (Index oh = 0; oh < s.out_h; ++oh) {
        for (Index ow = 0; ow < s.out_w; ++ow) {
          const T* window = xp + oh * s.stride * s.width + ow * s.stride;
          T total = 0;
          for (Index u = 0; u < s.kernel; ++u)
            for (Index v = 0; v < s.kernel; ++v) total += window[u * s.width + v];
          yp[oh * s.out_w + ow] = total / count;
        }
      }
    }
  });
}

// g [planes, Ho, Wo] -> dx [planes, H, W] (zeroed by the caller): each element of a window
// += g / kernel^2
template <class T>
void avg_pool_backward(const PoolShape& s, const T* g, T* dx) {
  const T count = static_cast<T>(s.kernel * s.kernel);
  parallel_for(s.planes, plane_grain(s), [&](Index begin, Index end) {
    for (Index plane = begin; plane < end; ++plane) {
      const T* gp = g + plane * s.out_plane_size();
      T* dxp = dx + plane * s.plane_size();
      for (Index oh = 0; oh < s.out_h; ++oh) {
        for (Index ow = 0; ow < s.out_w; ++ow) {
          T* window = dxp + oh * s.stride * s.width + ow * s.stride;
          const T share = gp[oh * s.out_w + ow] / count;
          for (Index u = 0; u < s.kernel; ++u)
            for (Index v = 0; v < s.kernel; ++v) window[u * s.width + v] += share;
        }
      }
    }
  });
}

Shape pooled_shape(const Tensor& x, const PoolShape& s) {
  return {x.size(0), x.size(1), s.out_h, s.out_w};
}

}  // namespace

// y = max of each window.  dy/dx = 1 for the window's (first) largest element, 0 for the others
Tensor max_pool2d(const Tensor& x, Index kernel_size, Index stride) {
  const PoolShape s = check_pool_shapes(x, kernel_size, stride, "max_pool2d");
  const NDArray xv = x.data();
  NDArray y = NDArray::empty(pooled_shape(x, s), xv.dtype());
  NDArray argmax = NDArray::empty(pooled_shape(x, s), kInt64);
  dispatch_float(xv.dtype(), "max_pool2d", [&]<class T>() {
    max_pool_forward<T>(s, xv.data<T>(), y.data<T>(), argmax.data<Index>());
  });
  const Shape x_shape = xv.shape();
  return make_op("max_pool2d", y, {x}, [=](const NDArray& g) -> Grads {
    NDArray dx = NDArray::zeros(x_shape, g.dtype());
    dispatch_float(g.dtype(), "max_pool2d", [&]<class T>() {
      max_pool_backward<T>(s, g.data<T>(), argmax.data<Index>(), dx.data<T>());
    });
    return {dx};
  });
}

// y = mean of each window.  dy/dx = 1 / kernel^2 for each element of the window
Tensor avg_pool2d(const Tensor& x, Index kernel_size, Index stride) {
  const PoolShape s = check_pool_shapes(x, kernel_size, stride, "avg_pool2d");
  const NDArray xv = x.data();
  NDArray y = NDArray::empty(pooled_shape(x, s), xv.dtype());
  dispatch_float(xv.dtype(), "avg_pool2d",
                 [&]<class T>() { avg_pool_forward<T>(s, xv.data<T>(), y.data<T>()); });
  const Shape x_shape = xv.shape();
  return make_op("avg_pool2d", y, {x}, [=](const NDArray& g) -> Grads {
    NDArray dx = NDArray::zeros(x_shape, g.dtype());
    dispatch_float(g.dtype(), "avg_pool2d",
                   [&]<class T>() { avg_pool_backward<T>(s, g.data<T>(), dx.data<T>()); });
    return {dx};
  });
}

// [B, C, H, W] -> [B, C, H*W] -> mean over the last axis -> [B, C]
Tensor global_avg_pool2d(const Tensor& x) {
  if (!x.defined()) fail("global_avg_pool2d: the input is undefined");
  if (x.ndim() != 4 || x.size(2) * x.size(3) == 0)
    fail("global_avg_pool2d: input must be [B, C, H, W] with H, W >= 1, got {}", x.shape());
  return mean(reshape(x, {x.size(0), x.size(1), x.size(2) * x.size(3)}), -1);
}

MaxPool2d::MaxPool2d(Index kernel, Index stride_) : kernel_size(kernel), stride(stride_) {
  if (kernel < 1 || stride < 1)
    fail("MaxPool2d: kernel size and stride must be positive, got {} and {}", kernel, stride);
}

std::string MaxPool2d::describe() const {
  return fmt::format("MaxPool2d(kernel {}x{}, stride {})", kernel_size, kernel_size, stride);
}

AvgPool2d::AvgPool2d(Index kernel, Index stride_) : kernel_size(kernel), stride(stride_) {
  if (kernel < 1 || stride < 1)
    fail("AvgPool2d: kernel size and stride must be positive, got {} and {}", kernel, stride);
}

std::string AvgPool2d::describe() const {
  return fmt::format("AvgPool2d(kernel {}x{}, stride {})", kernel_size, kernel_size, stride);
}

}  // namespace attend::nn
