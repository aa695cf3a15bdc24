#include "tensor/ndarray.h"

#include <cmath>
#include <cstring>

#include "tensor/allocator.h"
#include "tensor/random.h"

namespace attend {

NDArray::Storage::Storage(std::size_t bytes) : pointer(memory::allocate(bytes)), bytes(bytes) {}
NDArray::Storage::~Storage() {
  memory::release(pointer, bytes);
}

// ---- creation ---------------------------------------------------------------------------

NDArray NDArray::empty(const Shape& shape, DType dtype) {
  const auto elements = static_cast<std::size_t>(shape.numel());
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(elements, dtype_size(dtype), &bytes) || bytes > kMaxArrayBytes)
    fail(
        "an array of shape {} ({}) would need {} elements of {} bytes: more than the {} bytes "
        "one array may have",
        shape, dtype_name(dtype), elements, dtype_size(dtype), kMaxArrayBytes);
  try {
    return NDArray(std::make_shared<Storage>(bytes), shape, dtype);
  } catch (const std::bad_alloc&) {
    fail("out of memory: an array of shape {} ({}) needs {} bytes", shape, dtype_name(dtype),
         bytes);
  }
}

NDArray NDArray::zeros(const Shape& shape, DType dtype) {
  NDArray out = empty(shape, dtype);
  std::memset(out.raw_data(), 0, out.nbytes());  // all-zero bits are 0 in every dtype
  return out;
}

NDArray NDArray::ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}

NDArray NDArray::full(const Shape& shape, double value, DType dtype) {
  NDArray out = empty(shape, dtype);
  dispatch_any(dtype, [&]<class T>() {
    T v = static_cast<T>(value);
    for (T& x : out.span<T>()) x = v;
  });
  return out;
}

NDArray NDArray::scalar(double value, DType dtype) {
  return full(Shape{}, value, dtype);
}

NDArray NDArray::zeros_like(const NDArray& other) {
  return zeros(other.shape(), other.dtype());
}

NDArray NDArray::arange(Index n, DType dtype) {
  return arange(0, static_cast<double>(n), 1, dtype);
}

NDArray NDArray::arange(double start, double stop, double step, DType dtype) {
  if (step == 0) fail("arange: step must not be 0");
  Index n = static_cast<Index>(std::ceil((stop - start) / step));
  NDArray out = empty(Shape{std::max<Index>(n, 0)}, dtype);
  dispatch_any(dtype, [&]<class T>() {
    T* p = out.data<T>();
    for (Index i = 0; i < out.numel(); ++i) p[i] = static_cast<T>(start + step * i);
  });
  return out;
}

NDArray NDArray::from_list(std::initializer_list<double> values, DType dtype) {
  return from_list(values, Shape{static_cast<Index>(values.size())}, dtype);
}

NDArray NDArray::from_list(std::initializer_list<double> values, const Shape& shape, DType dtype) {
  if (shape.numel() != static_cast<Index>(values.size()))
    fail("from_list: {} values do not fill shape {} ({} elements)", values.size(), shape,
         shape.numel());
  NDArray out = empty(shape, dtype);
  dispatch_any(dtype, [&]<class T>() {
    T* p = out.data<T>();
    for (double v : values) *p++ = static_cast<T>(v);
  });
  return out;
}

namespace {
template <class T>
NDArray from_span(std::span<const T> values, const Shape& shape) {
  if (shape.numel() != static_cast<Index>(values.size()))
    fail("from_vector: {} values do not fill shape {} ({} elements)", values.size(), shape,
         shape.numel());
  NDArray out = NDArray::empty(shape, dtype_of<T>());
  if (!values.empty()) std::memcpy(out.raw_data(), values.data(), out.nbytes());
  return out;
}
}  // namespace

NDArray NDArray::from_vector(std::span<const float> v, const Shape& s) {
  return from_span(v, s);
}
NDArray NDArray::from_vector(std::span<const double> v, const Shape& s) {
  return from_span(v, s);
}
NDArray NDArray::from_vector(std::span<const std::int64_t> v, const Shape& s) {
  return from_span(v, s);
}

NDArray NDArray::uniform(const Shape& shape, Generator& gen, double low, double high, DType dtype) {
  NDArray out = empty(shape, dtype);
  dispatch_float(dtype, "uniform", [&]<class T>() {
    for (T& x : out.span<T>()) x = static_cast<T>(gen.uniform(low, high));
  });
  return out;
}

NDArray NDArray::normal(const Shape& shape, Generator& gen, double mean, double stddev,
                        DType dtype) {
  NDArray out = empty(shape, dtype);
  dispatch_float(dtype, "normal", [&]<class T>() {
    for (T& x : out.span<T>()) x = static_cast<T>(gen.normal(mean, stddev));
  });
  return out;
}

// ---- access -------------------------------------------------------------------------------

Index NDArray::size(int axis) const {
  return shape_[normalize_axis(axis, ndim(), "size")];
}

void NDArray::check_dtype(DType requested) const {
  if (!defined()) fail("data: the array is undefined");
  if (requested != dtype_)
    fail("data: the array holds {} but {} was requested", dtype_name(dtype_),
         dtype_name(requested));
}

Index NDArray::flat_index(std::initializer_list<Index> index) const {
  if (static_cast<int>(index.size()) != ndim())
    fail("at: {} indices given for an array of shape {}", index.size(), shape_);
  Index flat = 0;
  int axis = 0;
  for (Index i : index) {
    Index n = shape_[axis];
    Index fixed = i < 0 ? i + n : i;
    if (fixed < 0 || fixed >= n)
      fail("at: index {} is out of range for dimension {} of size {} (shape {})", i, axis, n,
           shape_);
    flat = flat * n + fixed;
    ++axis;
  }
  return flat;
}

double NDArray::item() const {
  check_defined(*this, "item", "array");
  if (numel() != 1) fail("item: the array has shape {}, not exactly one element", shape_);
  return dispatch_any(dtype_, [&]<class T>() { return static_cast<double>(data<T>()[0]); });
}

double NDArray::at(std::initializer_list<Index> index) const {
  Index flat = flat_index(index);
  return dispatch_any(dtype_, [&]<class T>() { return static_cast<double>(data<T>()[flat]); });
}

void NDArray::set(std::initializer_list<Index> index, double value) {
  Index flat = flat_index(index);
  dispatch_any(dtype_, [&]<class T>() { data<T>()[flat] = static_cast<T>(value); });
}

std::vector<double> NDArray::to_vector() const {
  check_defined(*this, "to_vector", "array");
  return dispatch_any(dtype_, [&]<class T>() {
    auto values = span<T>();
    return std::vector<double>(values.begin(), values.end());
  });
}

// ---- new arrays ---------------------------------------------------------------------------

NDArray NDArray::clone() const {
  check_defined(*this, "clone", "array");
  NDArray out = empty(shape_, dtype_);
  if (nbytes() > 0) std::memcpy(out.raw_data(), raw_data(), nbytes());
  return out;
}

NDArray NDArray::to(DType dtype) const {
  check_defined(*this, "to", "array");
  if (dtype == dtype_) return *this;
  NDArray out = empty(shape_, dtype);
  dispatch_any(dtype_, [&]<class From>() {
    dispatch_any(dtype, [&]<class To>() {
      const From* src = data<From>();
      To* dst = out.data<To>();
      for (Index i = 0; i < numel(); ++i) dst[i] = static_cast<To>(src[i]);
    });
  });
  return out;
}

NDArray NDArray::reshape(const Shape& shape) const {
  check_defined(*this, "reshape", "array");
  if (shape.numel() != numel())
    fail("reshape: cannot view {} ({} elements) as {} ({} elements)", shape_, numel(), shape,
         shape.numel());
  return NDArray(storage_, shape, dtype_);
}

NDArray NDArray::reshape(std::initializer_list<Index> sizes) const {
  return reshape(infer_shape(sizes, numel(), "reshape"));
}

Shape infer_shape(std::initializer_list<Index> sizes, Index numel, std::string_view op) {
  Shape shape;
  int inferred_axis = -1;
  Index known = 1;
  for (Index size : sizes) {
    if (size == -1) {
      if (inferred_axis >= 0) fail("{}: only one size may be -1", op);
      inferred_axis = shape.ndim();
      shape.push_back(1);
    } else {
      shape.push_back(size);  // rejects other negative sizes
      known *= size;
    }
  }
  if (inferred_axis >= 0) {
    if (known == 0 || numel % known != 0)
      fail("{}: cannot infer the -1 size: {} elements do not divide into {}", op, numel,
           to_string(shape));
    shape[inferred_axis] = numel / known;
  }
  return shape;
}

void check_defined(const NDArray& x, std::string_view op, std::string_view what) {
  if (!x.defined()) fail("{}: {} is undefined (an empty NDArray)", op, what);
}

void check_same_shape(const NDArray& a, const NDArray& b, std::string_view op) {
  if (a.shape() != b.shape()) fail("{}: shapes {} and {} differ", op, a.shape(), b.shape());
}

void check_same_dtype(const NDArray& a, const NDArray& b, std::string_view op) {
  if (a.dtype() != b.dtype())
    fail("{}: dtypes {} and {} differ (convert one with .to())", op, dtype_name(a.dtype()),
         dtype_name(b.dtype()));
}

}  // namespace attend
