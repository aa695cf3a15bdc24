// max_pool2d and avg_pool2d: each (sample, channel) plane is pooled on its own, so the planes
// are shared out to the threads (parallel_for) and every output and every input gradient is
// computed by one thread in a fixed order: the results are identical for any number of
// threads.
#include "nn/pool.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "autograd/ops.h"
#include "tensor/allocator.h"
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
// four elements equal to m (the first maximum, as take_larger picks), recorded as its place in
// the window, 0 to 3 in row-major order (an int32, as wide as a float: with
// a byte the loop does not vectorise; the backward pass reads it back). Returns
// false if the rows hold a NaN; the caller then redoes the row with take_larger, which lets
// the NaN through. `omp simd` asks for the vectorisation that GCC's -O2 cost model declines
// (the stride-2 reads need shuffles): about 9x faster on a [32, 32, 64, 64] input.
template <class T>
bool max_pool_row_2x2(const T* upper, const T* lower, Index out_w, T* y, std::int32_t* place) {
  int has_nan = 0;
#pragma omp simd reduction(| : has_nan)
  for (Index ow = 0; ow < out_w; ++ow) {
    const T a = upper[2 * ow], b = upper[2 * ow + 1], c = lower[2 * ow], d = lower[2 * ow + 1];
    T m = b > a ? b : a;
    m = c > m ? c : m;
    m = d > m ? d : m;
    y[ow] = m;
    place[ow] = a == m ? 0 : b == m ? 1 : c == m ? 2 : 3;
    has_nan |= (a != a) | (b != b) | (c != c) | (d != d);
  }
  return has_nan == 0;
}

// The element of each window that max-pooling takes: for 2x2 windows of stride 2, its place
// in the window (an int32 per output, see max_pool_row_2x2); otherwise its position
// (row * W + column) in its plane.
struct MaxPlaces {
  std::shared_ptr<std::int32_t[]> in_window;  // 2x2, stride 2
  NDArray in_plane;                           // any other window, int64
};

bool is_2x2(const PoolShape& s) {
  return s.kernel == 2 && s.stride == 2;
}

// x [planes, H, W] -> y [planes, Ho, Wo], and where each output's element is (MaxPlaces).
template <class T>
void max_pool_forward(const PoolShape& s, const T* x, T* y, MaxPlaces& places) {
  std::int32_t* in_window = places.in_window.get();
  Index* in_plane = places.in_plane.defined() ? places.in_plane.data<Index>() : nullptr;
  parallel_for(s.planes, plane_grain(s), [&](Index begin, Index end) {
    for (Index plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * s.plane_size();
      T* yp = y + plane * s.out_plane_size();
      for (Index oh = 0; oh < s.out_h; ++oh) {
        const Index top = oh * s.stride, out = plane * s.out_plane_size() + oh * s.out_w;
        if (in_window && max_pool_row_2x2(xp + top * s.width, xp + (top + 1) * s.width, s.out_w,
                                          yp + oh * s.out_w, in_window + out))
          continue;
        for (Index ow = 0; ow < s.out_w; ++ow) {
          const Index left = ow * s.stride;
          Index best = top * s.width + left;
          for (Index u = 0; u < s.kernel; ++u)
            for (Index v = 0; v < s.kernel; ++v)
              take_larger(xp, (top + u) * s.width + left + v, best);
          yp[oh * s.out_w + ow] = xp[best];
          if (in_window)  // the row held a NaN: 0 to 3 from the offset 0, 1, W or W + 1
            in_window[out + ow] =
                static_cast<std::int32_t>((best - top * s.width - left) / s.width * 2 +
                                          (best - top * s.width - left) % s.width);
          else
            in_plane[out + ow] = best;
        }
      }
    }
  });
}

// Two floats side by side, written as one 64-bit integer (any alignment, may alias floats).
typedef std::uint64_t FloatPair __attribute__((may_alias, aligned(alignof(float))));

// One row of 2x2 windows backward: the two rows of dx under it, 0 + g at each window's place
// (as dx[max] += g onto zeros gave: -0 becomes +0) and 0 at the other three. In float, each
// pair of columns is written as one 64-bit integer (0 has all bits 0), the form in which GCC
// vectorises the loop: with four float stores per window it does not. A function of its own,
// on plain pointers, so that nothing in the loop may alias.
template <class T>
void max_pool_backward_row_2x2(const T* g, const std::int32_t* place, Index out_w, T* upper,
                               T* lower) {
  if constexpr (std::is_same_v<T, float>) {
    static_assert(std::endian::native == std::endian::little, "column 2*ow in the low half");
    FloatPair* up = reinterpret_cast<FloatPair*>(upper);
    FloatPair* down = reinterpret_cast<FloatPair*>(lower);
#pragma omp simd
    for (Index ow = 0; ow < out_w; ++ow) {
      const std::uint64_t bits = std::bit_cast<std::uint32_t>(0.0f + g[ow]);
      const std::int32_t at = place[ow];
      up[ow] = at == 0 ? bits : at == 1 ? bits << 32 : 0;
      down[ow] = at == 2 ? bits : at == 3 ? bits << 32 : 0;
    }
  } else {
    for (Index ow = 0; ow < out_w; ++ow) {
      const T share = T(0) + g[ow];
      const std::int32_t at = place[ow];
      upper[2 * ow] = at == 0 ? share : T(0);
      upper[2 * ow + 1] = at == 1 ? share : T(0);
      lower[2 * ow] = at == 2 ? share : T(0);
      lower[2 * ow + 1] = at == 3 ? share : T(0);
    }
  }
}

// 2x2 windows of stride 2: g [planes, Ho, Wo] -> dx [planes, H, W], every element written (no
// zeroing first), 0 at a last row or column that no window covers.
template <class T>
void max_pool_backward_2x2(const PoolShape& s, const T* g, const std::int32_t* in_window, T* dx) {
  parallel_for(s.planes, plane_grain(s), [&](Index begin, Index end) {
    for (Index plane = begin; plane < end; ++plane) {
      T* dxp = dx + plane * s.plane_size();
      for (Index oh = 0; oh < s.out_h; ++oh) {
        const Index out = plane * s.out_plane_size() + oh * s.out_w;
        const T* gr = g + out;
        const std::int32_t* pr = in_window + out;
        T* upper = dxp + 2 * oh * s.width;
        T* lower = upper + s.width;
        max_pool_backward_row_2x2(gr, pr, s.out_w, upper, lower);
        if (s.width % 2) upper[s.width - 1] = lower[s.width - 1] = T(0);
      }
      if (s.height % 2) std::fill(dxp + (s.height - 1) * s.width, dxp + s.plane_size(), T(0));
    }
  });
}

// Any other window: g [planes, Ho, Wo] -> dx [planes, H, W] (zeroed by the caller):
// dx[argmax] += g
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
  MaxPlaces places;
  if (is_2x2(s)) {  // not zeroed: every place is written
    const auto bytes =
        sizeof(std::int32_t) * static_cast<std::size_t>(s.planes * s.out_plane_size());
    places.in_window =
        std::shared_ptr<std::int32_t[]>(static_cast<std::int32_t*>(memory::allocate(bytes)),
                                        [bytes](std::int32_t* p) { memory::release(p, bytes); });
  } else {
    places.in_plane = NDArray::empty(pooled_shape(x, s), kInt64);
  }
  dispatch_float(xv.dtype(), "max_pool2d",
                 [&]<class T>() { max_pool_forward<T>(s, xv.data<T>(), y.data<T>(), places); });
  const Shape x_shape = xv.shape();
  return make_op("max_pool2d", y, {x}, [=](const NDArray& g) -> Grads {
    NDArray dx =
        places.in_window ? NDArray::empty(x_shape, g.dtype()) : NDArray::zeros(x_shape, g.dtype());
    dispatch_float(g.dtype(), "max_pool2d", [&]<class T>() {
      if (places.in_window)
        max_pool_backward_2x2<T>(s, g.data<T>(), places.in_window.get(), dx.data<T>());
      else
        max_pool_backward<T>(s, g.data<T>(), places.in_plane.data<Index>(), dx.data<T>());
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
