// conv2d as matrix products: im2col + GEMM, the way Caffe computed convolutions (Jia et al.,
// 2014) and many CPU libraries still do.
//
// For one sample b, with K = C*kh*kw (the size of one patch) and P = Ho*Wo (the number of
// output positions):
//   cols [K, P]   = im2col(x_b)         column p holds the input patch that output p sees
//   y_b  [O, P]   = W [O, K] @ cols     (+ bias[o] on row o); W [O, C, kh, kw] read as [O, K]
// and backward, with g_b = dL/dy_b [O, P]:
//   dL/dW [O, K] += g_b @ cols^T        each weight meets every input it multiplied
//   dL/db [O]    += sum over p of g_b
//   dcols [K, P]  = W^T @ g_b           the gradient of every copied patch element
//   dL/dx_b       = col2im(dcols)       each element added back where it was copied from
//                                       (an input in several patches gets the sum)
// All three products cost O*K*P multiply-adds per sample.
//
// The columns are written where gemm reads them, so that the products need no copy of them:
// for the forward product, in gemm's packed layout of B (im2col below); for dL/dW, row-major,
// as the A of the transposed product dL/dW^T = cols @ g_b^T when that packs fewer numbers
// (weight_gradient_transposed).
// Every number is the same, bit for bit, as with the plain products (one gemm call on
// row-major operands each; tests/nn/layers/test_conv_layouts.cpp checks it).
//
// Backward computes the columns again instead of saving them from the forward pass: they are
// kh*kw times larger than x, and one more copy pass is cheap next to the products.
//
// Threads. The batch is cut into chunks of whole samples, one chunk per thread
// (parallel_for). A sample's y and dL/dx are computed by one thread, the same way whatever
// the number of threads, so they are bitwise identical for any number of threads. dL/dW and
// dL/db are sums over the samples: each chunk sums its own samples into its own partial
// sum, and then the partials are added in chunk order 0, 1, 2, ... So with a given number of
// threads the result is bitwise reproducible; with another number of threads the chunks,
// hence the order of the additions, differ, and dL/dW, dL/db differ in the last bits.
//
// parallel_for must not be called from inside parallel_for, and the float32 gemm uses it for
// products of 2^24 or more multiply-adds. Inside a chunk, gemm runs on the chunk's thread.
// Only when a sample's products are that large (big images) and the batch has fewer samples
// than threads do the samples run one after the other on the calling thread (a single chunk),
// every product split over the threads by gemm instead.
#include "nn/conv.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "autograd/saved_array.h"
#include "nn/init.h"
#include "tensor/gemm.h"
#include "tensor/parallel.h"

namespace attend::nn {
namespace {

struct ConvShape {
  Index batch = 0, channels = 0, height = 0, width = 0;  // x [B, C, H, W]
  Index out_channels = 0, kernel_h = 0, kernel_w = 0;    // weight [O, C, kh, kw]
  Index stride = 1, padding = 0;
  Index out_h = 0, out_w = 0;                                     // y [B, O, Ho, Wo]
  Index patch() const { return channels * kernel_h * kernel_w; }  // K
  Index positions() const { return out_h * out_w; }               // P
};

ConvShape check_conv_shapes(const Tensor& x, const Tensor& weight, const Tensor& bias, Index stride,
                            Index padding) {
  if (!x.defined() || !weight.defined()) fail("conv2d: the input or the weight is undefined");
  if (x.ndim() != 4) fail("conv2d: input must be [B, C, H, W], got {}", x.shape());
  if (weight.ndim() != 4)
    fail("conv2d: weight must be [out_channels, in_channels, kh, kw], got {}", weight.shape());
  for (Index size : weight.shape().dims())
    if (size < 1) fail("conv2d: weight {} has an empty dimension", weight.shape());
  if (x.size(1) != weight.size(1))
    fail("conv2d: input {} has {} channels but weight {} expects {}", x.shape(), x.size(1),
         weight.shape(), weight.size(1));
  if (bias.defined() && bias.shape() != Shape{weight.size(0)})
    fail("conv2d: bias {} does not match weight {} (expected [{}])", bias.shape(), weight.shape(),
         weight.size(0));
  check_same_dtype(x.data(), weight.data(), "conv2d");
  if (bias.defined()) check_same_dtype(x.data(), bias.data(), "conv2d");
  if (stride < 1) fail("conv2d: stride must be positive, got {}", stride);
  if (padding < 0) fail("conv2d: padding must be non-negative, got {}", padding);
  ConvShape s;
  s.batch = x.size(0), s.channels = x.size(1), s.height = x.size(2), s.width = x.size(3);
  s.out_channels = weight.size(0), s.kernel_h = weight.size(2), s.kernel_w = weight.size(3);
  s.stride = stride, s.padding = padding;
  const Index padded_h = s.height + 2 * padding, padded_w = s.width + 2 * padding;
  if (s.kernel_h > padded_h || s.kernel_w > padded_w)
    fail("conv2d: kernel {}x{} is larger than the padded input {}x{} (input {}, padding {})",
         s.kernel_h, s.kernel_w, padded_h, padded_w, x.shape(), padding);
  s.out_h = (padded_h - s.kernel_h) / stride + 1;
  s.out_w = (padded_w - s.kernel_w) / stride + 1;
  return s;
}

// How many chunks of samples to cut the batch into (see "Threads" above): one per thread when
// there are at least as many samples as threads, so that im2col, col2im and the bias sums run
// on every thread too; a batch smaller than that with large products is left to gemm's threads.
template <class T>
Index batch_chunks(const ConvShape& s) {
  const Index work = s.out_channels * s.patch() * s.positions();
  if (std::is_same_v<T, float> && work >= gemm_threaded_work() && s.batch < num_threads()) return 1;
  return std::max<Index>(1, std::min<Index>(num_threads(), s.batch));
}

// Kernel offset v reads input position o*stride - padding + v for output position o. It is
// inside [0, size) for o in [first, last); the other outputs read the zero padding.
struct InsideRange {
  Index first, last;
};
InsideRange inside_range(Index v, Index size, Index out_size, Index stride, Index padding) {
  // o*stride >= padding - v  and  o*stride < size + padding - v, with o in [0, out_size)
  auto ceil_div = [](Index a, Index b) { return a <= 0 ? Index{0} : (a + b - 1) / b; };
  const Index first = std::min(ceil_div(padding - v, stride), out_size);
  const Index last = std::min(ceil_div(size + padding - v, stride), out_size);
  return {first, std::max(first, last)};
}

// One row of cols, or the part of it in one sliver: dst[ow - ow0] for ow in [ow0, ow1) is
// row[ow * stride + shift], or 0 outside `inside` (row null: the whole row is padding).
// (Written as simd loops instead of memset and memmove, it was not faster: 13.9% of REF-SAT's
// samples against 11.8%.)
template <class T>
[[gnu::always_inline]] inline void im2col_piece(const ConvShape& s, const T* row, Index shift,
                                                InsideRange inside, Index ow0, Index ow1, T* dst) {
  const Index first = row ? std::clamp(inside.first, ow0, ow1) : ow1;
  const Index last = row ? std::clamp(inside.last, first, ow1) : ow1;
  std::fill(dst, dst + (first - ow0), T(0));
  if (first < last && s.stride == 1) {  // a contiguous piece of the row
    std::copy(row + (first + shift), row + (last + shift), dst + (first - ow0));
  } else {
    for (Index ow = first; ow < last; ++ow) dst[ow - ow0] = row[ow * s.stride + shift];
  }
  std::fill(dst + (last - ow0), dst + (ow1 - ow0), T(0));
}

// to[0..n) = from[0..n) (from null: zeros). The pieces of a packed im2col are short (a sliver
// is 32 numbers): loops the compiler vectorises in place, where std::copy and std::fill would
// call memmove and memset for every piece (#pragma omp simd keeps them loops).
template <class T>
void copy_numbers(const T* from, Index n, T* to) {
  if (from) {
#pragma omp simd
    for (Index j = 0; j < n; ++j) to[j] = from[j];
  } else {
#pragma omp simd
    for (Index j = 0; j < n; ++j) to[j] = T(0);
  }
}

// im2col when the output is as large as the input and the stride 1 (the course's 3x3
// convolutions with padding 1; any k x k with padding (k - 1) / 2): row k = (c, u, v) of cols is
// then the plane x_c itself read from an offset, cols[k, p] = x_c[p + shift] with shift =
// (u - padding) W + (v - padding), except where the patch reaches into the padding: whole
// output rows at the top or bottom, and the first or last columns of every row. So each piece
// (a sliver's 32 columns, or in the row-major layout the whole row of cols) is one straight
// copy, and the padding's zeros are written over it afterwards: no piece per output row and
// far less bookkeeping than im2col's general loop below, the same numbers.
template <class T>
void im2col_same_size(const ConvShape& s, const T* x, T* cols, bool packed, Index ld) {
  const Index K = s.patch(), P = s.positions(), W = s.width, w = gemm_sliver_width();
  const Index cut = packed ? w : P;        // a piece never crosses a multiple of cut
  const Index next = packed ? w * K : 0;   // from one sliver to the next
  const Index row_step = packed ? w : ld;  // from one row to the next
  Index k = 0;
  for (Index c = 0; c < s.channels; ++c) {
    const T* plane = x + c * P;
    for (Index u = 0; u < s.kernel_h; ++u) {
      const InsideRange rows = inside_range(u, s.height, s.out_h, 1, s.padding);
      for (Index v = 0; v < s.kernel_w; ++v, ++k) {
        const InsideRange columns = inside_range(v, W, s.out_w, 1, s.padding);
        const Index shift = (u - s.padding) * W + (v - s.padding);
        // p in [lo, hi) reads inside the plane and from an output row inside the input
        const Index lo = std::max(rows.first * W, -shift), hi = std::min(rows.last * W, P - shift);
        T* out = cols + k * row_step;
        for (Index p0 = 0; p0 < P; p0 += cut, out += next) {
          const Index p1 = std::min(P, p0 + cut), a = std::clamp(lo, p0, p1);
          const Index b = std::clamp(hi, a, p1);
          copy_numbers<T>(nullptr, a - p0, out);
          copy_numbers(plane + a + shift, b - a, out + (a - p0));
          copy_numbers<T>(nullptr, p1 - b, out + (b - p0));
          for (Index row = a / W * W; row < b; row += W) {  // the columns in the padding
            for (Index p = std::max(row, a); p < std::min(row + columns.first, b); ++p)
              out[p - p0] = T(0);
            for (Index p = std::max(row + columns.last, a); p < std::min(row + W, b); ++p)
              out[p - p0] = T(0);
          }
          if (packed) std::fill(out + (p1 - p0), out + w, T(0));  // past column P
        }
      }
    }
  }
}

// x_b [C, H, W] -> cols [K, P]: row (c*kh + u)*kw + v, column oh*Wo + ow holds
// x_b[c, oh*stride - padding + u, ow*stride - padding + v], or 0 in the padding. cols is
// row-major with leading dimension ld, or (packed) in the layout in which gemm reads a packed B
// (tensor/gemm.h: slivers of w = gemm_sliver_width() columns, element (k, p) at
// (p / w) * w * K + k * w + p % w, zeros past column P), so that the forward product reads it
// as it is, without a packing copy. Row by row, each output row cut in pieces where it crosses
// from one sliver to the next.
template <class T>
void im2col(const ConvShape& s, const T* x, T* cols, bool packed, Index ld) {
  if (s.stride == 1 && s.out_h == s.height && s.out_w == s.width)
    return im2col_same_size(s, x, cols, packed, ld);
  const Index K = s.patch(), P = s.positions(), w = gemm_sliver_width();
  const Index cut = packed ? w : P;        // a piece never crosses a multiple of cut
  const Index next = packed ? w * K : 0;   // from one sliver to the next
  const Index row_step = packed ? w : ld;  // from one row to the next
  Index k = 0;
  for (Index c = 0; c < s.channels; ++c) {
    for (Index u = 0; u < s.kernel_h; ++u) {
      const InsideRange rows = inside_range(u, s.height, s.out_h, s.stride, s.padding);
      for (Index v = 0; v < s.kernel_w; ++v, ++k) {
        const InsideRange cols_in = inside_range(v, s.width, s.out_w, s.stride, s.padding);
        const Index shift = v - s.padding;           // row[ow*stride + shift] is the input element
        T* out = cols + k * row_step;                // row k of the current sliver
        Index at = 0;                                // the current column's place in it
        for (Index p = 0, oh = 0, ow = 0; p < P;) {  // pieces of output rows
          const Index ow1 = std::min(s.out_w, ow + (cut - at));
          const T* row = oh < rows.first || oh >= rows.last
                             ? nullptr
                             : x + (c * s.height + oh * s.stride - s.padding + u) * s.width;
          im2col_piece(s, row, shift, cols_in, ow, ow1, out + at);
          at += ow1 - ow, p += ow1 - ow;
          if (at == cut) out += next, at = 0;
          if (ow1 == s.out_w)
            ow = 0, ++oh;
          else
            ow = ow1;
        }
        if (packed && at > 0) std::fill(out + at, out + w, T(0));  // past column P
      }
    }
  }
}

// The reverse of im2col: dx_b [C, H, W] += each element of dcols [K, P] at the input
// position it was copied from (positions in the padding are dropped).
template <class T>
void col2im(const ConvShape& s, const T* dcols, T* dx) {
  const T* src = dcols;
  for (Index c = 0; c < s.channels; ++c) {
    for (Index u = 0; u < s.kernel_h; ++u) {
      const InsideRange rows = inside_range(u, s.height, s.out_h, s.stride, s.padding);
      for (Index v = 0; v < s.kernel_w; ++v) {
        const InsideRange cols_in = inside_range(v, s.width, s.out_w, s.stride, s.padding);
        for (Index oh = 0; oh < s.out_h; ++oh, src += s.out_w) {
          if (oh < rows.first || oh >= rows.last) continue;
          T* row = dx + (c * s.height + oh * s.stride - s.padding + u) * s.width;
          const Index shift = v - s.padding;
          if (s.stride == 1) {  // a contiguous piece of the row: a vectorised add
#pragma omp simd
            for (Index ow = cols_in.first; ow < cols_in.last; ++ow) row[ow + shift] += src[ow];
          } else {
            for (Index ow = cols_in.first; ow < cols_in.last; ++ow)
              row[ow * s.stride + shift] += src[ow];
          }
        }
      }
    }
  }
}

// x [B, C, H, W], w [O, K], bias [O] or null, y [B, O, P]
template <class T>
void conv2d_forward(const ConvShape& s, const T* x, const T* w, const T* bias, T* y) {
  const Index K = s.patch(), P = s.positions(), O = s.out_channels;
  const Index B = s.batch, chunks = batch_chunks<T>(s);
  const Index sample = s.channels * s.height * s.width;
  parallel_for(chunks, 1, [&](Index chunk_begin, Index chunk_end) {
    // This thread's im2col buffer, in gemm's packed layout.
    NDArray cols = NDArray::empty({gemm_packed_b_size(K, P)}, dtype_of<T>());
    T* pc = cols.data<T>();
    for (Index b = chunk_begin * B / chunks; b < chunk_end * B / chunks; ++b) {
      im2col(s, x + b * sample, pc, true, 0);
      T* yb = y + b * O * P;
      if (bias) {  // start every row from its bias, and let gemm add the product to it
        for (Index o = 0; o < O; ++o) {
          T* row = yb + o * P;
          const T start = bias[o];
#pragma omp simd  // (std::fill of a number other than 0 is a scalar loop at -O2)
          for (Index p = 0; p < P; ++p) row[p] = start;
        }
      }
      gemm({.m = O, .n = P, .k = K, .accumulate = bias != nullptr, .b_packed = true}, w, K, pc, 0,
           yb, P);
    }
  });
}

// The weight gradient's product, dL/dW = g_b @ cols^T, needs one of its operands transposed
// into gemm's packed layout: cols (K x P numbers) as it is written, or g_b (O x P) if it is
// computed as its transpose, dL/dW^T [K, O] += cols @ g_b^T, with cols read in place (as A).
// The smaller one is packed: g_b when K > O (the course's second and third layers: K = 288
// and 576 against O = 64), cols otherwise (its first layer: K = 27, O = 32). Each element is
// the same sum in the same order either way: one chain of fused multiply-adds per block of 256
// p in increasing p, the operands of each product swapped (which does not change it), the
// blocks added in order (tensor/gemm.cpp). Only when one orientation takes gemm's loops for
// small products (whose chains run through C) and the other its kernel do the sums differ:
// then dW is computed as g_b @ cols^T.
bool weight_gradient_transposed(const ConvShape& s) {
  const Index K = s.patch(), O = s.out_channels, P = s.positions();
  const bool plain_small = gemm_uses_small_loops({.m = O, .n = K, .k = P, .transpose_b = true});
  const bool transposed_small =
      gemm_uses_small_loops({.m = K, .n = O, .k = P, .transpose_b = true});
  return K > O && plain_small == transposed_small;
}

// Rows of cols for the weight gradient, im2col(x_b) row-major, with this leading dimension:
// P rounded up to an odd multiple of 16 floats, so that the rows that gemm reads together (A
// in place) do not all fall in the same cache sets when P is a multiple of a large power of
// two (4096 in the course's first layer).
Index cols_ld(Index P) {
  return (P + 15) / 16 % 2 ? (P + 15) / 16 * 16 : (P + 15) / 16 * 16 + 16;
}

// x [B, C, H, W], w [O, K], gy [B, O, P]; dx [B, C, H, W], dw [O, K], db [O], each null
// when that gradient is not wanted.
template <class T>
void conv2d_backward(const ConvShape& s, const T* x, const T* w, const T* gy, T* dx, T* dw, T* db) {
  const Index K = s.patch(), P = s.positions(), O = s.out_channels;
  const Index B = s.batch, chunks = batch_chunks<T>(s);
  const Index sample = s.channels * s.height * s.width;
  const bool transposed = weight_gradient_transposed(s);
  const Index ld = cols_ld(P);
  // Row c of each: the partial sum over the samples of chunk c (dL/dW^T when transposed).
  NDArray partial_dw = NDArray::zeros({chunks, dw ? O * K : 0}, dtype_of<T>());
  NDArray partial_db = NDArray::zeros({chunks, db ? O : 0}, dtype_of<T>());
  parallel_for(chunks, 1, [&](Index chunk_begin, Index chunk_end) {
    NDArray cols = NDArray::empty({dw ? K : 0, ld}, dtype_of<T>());  // im2col(x_b)
    NDArray dcols = NDArray::empty({dx ? K : 0, P}, dtype_of<T>());  // W^T g_b
    for (Index chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      T* chunk_dw = partial_dw.data<T>() + chunk * partial_dw.size(1);
      T* chunk_db = partial_db.data<T>() + chunk * partial_db.size(1);
      for (Index b = chunk * B / chunks; b < (chunk + 1) * B / chunks; ++b) {
        const T* gb = gy + b * O * P;
        if (dw) {  // dL/dW += g_b @ cols^T
          im2col(s, x + b * sample, cols.data<T>(), false, ld);
          if (transposed)
            gemm({.m = K, .n = O, .k = P, .transpose_b = true, .accumulate = true}, cols.data<T>(),
                 ld, gb, P, chunk_dw, O);
          else
            gemm({.m = O, .n = K, .k = P, .transpose_b = true, .accumulate = true}, gb, P,
                 cols.data<T>(), ld, chunk_dw, K);
        }
        if (db) {  // dL/db[o] += sum over p of g_b[o, p]
          for (Index o = 0; o < O; ++o) {
            // omp simd: several partial sums in vector lanes, added at the end (a fixed order,
            // so still reproducible); one scalar chain would wait on each addition.
            T row_sum = 0;
#pragma omp simd reduction(+ : row_sum)
            for (Index p = 0; p < P; ++p) row_sum += gb[o * P + p];
            chunk_db[o] += row_sum;
          }
        }
        if (dx) {  // dL/dx_b = col2im(W^T @ g_b)
          gemm({.m = K, .n = P, .k = O, .transpose_a = true}, w, K, gb, P, dcols.data<T>(), P);
          T* dxb = dx + b * sample;
          std::fill(dxb, dxb + sample, T(0));
          col2im(s, dcols.data<T>(), dxb);
        }
      }
    }
  });
  // The partials, added in chunk order.
  auto add_partials = [&](const NDArray& partials, T* out) {
    const Index n = partials.size(1);
    const T* p = partials.data<T>();
    std::copy(p, p + n, out);
    for (Index chunk = 1; chunk < chunks; ++chunk)
      for (Index i = 0; i < n; ++i) out[i] += p[chunk * n + i];
  };
  if (dw && transposed) {  // dL/dW^T [K, O] -> dL/dW [O, K]
    NDArray dw_t = NDArray::empty({K, O}, dtype_of<T>());
    add_partials(partial_dw, dw_t.data<T>());
    const T* t = dw_t.data<T>();
    for (Index o = 0; o < O; ++o)
      for (Index k = 0; k < K; ++k) dw[o * K + k] = t[k * O + o];
  } else if (dw) {
    add_partials(partial_dw, dw);
  }
  if (db) add_partials(partial_db, db);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Index stride,
              Index padding) {
  const ConvShape s = check_conv_shapes(x, weight, bias, stride, padding);
  const NDArray xv = x.data(), wv = weight.data();
  const NDArray bv = bias.defined() ? bias.data() : NDArray();
  NDArray y = NDArray::empty({s.batch, s.out_channels, s.out_h, s.out_w}, xv.dtype());
  dispatch_float(xv.dtype(), "conv2d", [&]<class T>() {
    conv2d_forward<T>(s, xv.data<T>(), wv.data<T>(), bv.defined() ? bv.data<T>() : nullptr,
                      y.data<T>());
  });

  const bool need_dx = x.requires_grad(), need_dw = weight.requires_grad();
  const bool has_bias = bias.defined(), need_db = has_bias && bias.requires_grad();
  const Shape b_shape = bv.defined() ? bv.shape() : Shape{};
  auto backward = [=, xs = SavedArray(xv, "input #0"),
                   ws = SavedArray(wv, "input #1")](const NDArray& g) -> Grads {
    NDArray dx = need_dx ? NDArray::empty(xs.shape(), g.dtype()) : NDArray();
    NDArray dw = need_dw ? NDArray::empty(ws.shape(), g.dtype()) : NDArray();
    NDArray db = need_db ? NDArray::empty(b_shape, g.dtype()) : NDArray();
    dispatch_float(g.dtype(), "conv2d", [&]<class T>() {
      conv2d_backward<T>(s, xs.get().data<T>(), ws.get().data<T>(), g.data<T>(),
                         need_dx ? dx.data<T>() : nullptr, need_dw ? dw.data<T>() : nullptr,
                         need_db ? db.data<T>() : nullptr);
    });
    if (has_bias) return {dx, dw, db};
    return {dx, dw};
  };
  if (has_bias) return make_op("conv2d", y, {x, weight, bias}, backward);
  return make_op("conv2d", y, {x, weight}, backward);
}

Conv2d::Conv2d(Index in_channels, Index out_channels, Index kernel_size, Index stride_,
               Index padding_, bool with_bias, Generator& gen)
    : stride(stride_), padding(padding_) {
  if (in_channels < 1 || out_channels < 1 || kernel_size < 1)
    fail("Conv2d: channels and kernel size must be positive, got in {} out {} kernel {}",
         in_channels, out_channels, kernel_size);
  if (stride < 1) fail("Conv2d: stride must be positive, got {}", stride);
  if (padding < 0) fail("Conv2d: padding must be non-negative, got {}", padding);
  // fan_in = C * kh * kw: the number of inputs each output sums over.
  const double bound = init::fan_in_bound(in_channels * kernel_size * kernel_size);
  weight = init::uniform({out_channels, in_channels, kernel_size, kernel_size}, bound, gen);
  register_parameter("weight", weight);
  if (with_bias) {
    bias = init::uniform({out_channels}, bound, gen);
    register_parameter("bias", bias);
  }
}

std::string Conv2d::describe() const {
  return fmt::format("Conv2d({} -> {}, kernel {}x{}, stride {}, padding {}{})", weight.size(1),
                     weight.size(0), weight.size(2), weight.size(3), stride, padding,
                     bias.defined() ? "" : ", no bias");
}

}  // namespace attend::nn
