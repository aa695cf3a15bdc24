// NDArray: an N-dimensional array of numbers, stored contiguously in row-major order.
//
// This is the "data" half of the engine, like a NumPy array: it knows its shape, its dtype
// and its memory, and the functions in the other tensor/ headers compute with it. It knows
// nothing about gradients; autograd/tensor.h wraps it into a Tensor that does.
//
// Memory layout. Element [i, j, k] of a [I, J, K] array sits at offset (i*J + j)*K + k:
// the last index moves fastest. Copying an NDArray is cheap and shares the memory (like a
// NumPy view); reshape() shares it too. clone() makes an independent copy. Every other
// operation returns a new array.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace attend {

class Generator;

// The largest array NDArray::empty makes: 1 TiB. A larger request is a mistake on any machine
// this course runs on (usually a size computed wrong), and AddressSanitizer stops the program
// above 1 TiB instead of reporting a failed allocation; refused with a message instead.
inline constexpr std::size_t kMaxArrayBytes = std::size_t{1} << 40;

class NDArray {
 public:
  NDArray() = default;  // an undefined array: defined() is false

  // ---- creation -------------------------------------------------------------------------
  static NDArray empty(const Shape& shape, DType dtype = kFloat32);  // uninitialised memory
  static NDArray zeros(const Shape& shape, DType dtype = kFloat32);
  static NDArray ones(const Shape& shape, DType dtype = kFloat32);
  static NDArray full(const Shape& shape, double value, DType dtype = kFloat32);
  static NDArray scalar(double value, DType dtype = kFloat32);  // a 0-d array
  static NDArray zeros_like(const NDArray& other);
  // 0, 1, ..., n-1 and start, start+step, ... (< stop)
  static NDArray arange(Index n, DType dtype = kFloat32);
  static NDArray arange(double start, double stop, double step, DType dtype = kFloat32);
  // From a list of values: a 1-D array, or reshaped to `shape` (sizes must match).
  static NDArray from_list(std::initializer_list<double> values, DType dtype = kFloat32);
  static NDArray from_list(std::initializer_list<double> values, const Shape& shape,
                           DType dtype = kFloat32);
  static NDArray from_vector(std::span<const float> values, const Shape& shape);
  static NDArray from_vector(std::span<const double> values, const Shape& shape);
  static NDArray from_vector(std::span<const std::int64_t> values, const Shape& shape);
  // Seeded random arrays; the same generator state gives the same numbers on every run.
  static NDArray uniform(const Shape& shape, Generator& gen, double low = 0, double high = 1,
                         DType dtype = kFloat32);
  static NDArray normal(const Shape& shape, Generator& gen, double mean = 0, double stddev = 1,
                        DType dtype = kFloat32);

  // ---- what it is ---------------------------------------------------------------------------
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return shape_.ndim(); }
  Index size(int axis) const;  // negative axes count from the end
  Index numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  // Typed access to the elements; T must match the dtype (checked).
  // Every non-const accessor (data, span, raw_data, set) may write, so it adds one to the
  // version of the memory (once per call, not per element). An op that saved this array
  // for its backward compares versions and refuses to use changed values (see
  // autograd/saved_array.h). Read through a const NDArray to leave the version alone.
  template <class T>
  T* data();
  template <class T>
  const T* data() const;
  template <class T>
  std::span<T> span() {
    return {data<T>(), static_cast<std::size_t>(numel())};
  }
  template <class T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<std::size_t>(numel())};
  }
  void* raw_data() {
    if (!storage_) return nullptr;
    storage_->bump_version();
    return storage_->pointer;
  }
  const void* raw_data() const { return storage_ ? storage_->pointer : nullptr; }

  // Element access for printing and tests (slow: converts through double).
  double item() const;  // the value of a one-element array
  double at(std::initializer_list<Index> index) const;
  void set(std::initializer_list<Index> index, double value);
  std::vector<double> to_vector() const;  // all elements, row-major

  // ---- new arrays from this one -------------------------------------------------------------
  NDArray clone() const;
  NDArray to(DType dtype) const;  // converts (a shared copy if the dtype already matches)
  // Same memory, new shape. In the list form one size may be -1: x.reshape({-1, 4}).
  NDArray reshape(const Shape& shape) const;
  NDArray reshape(std::initializer_list<Index> sizes) const;
  bool shares_memory_with(const NDArray& other) const { return storage_ == other.storage_; }
  // How many times the memory was handed out for writing (shared by every array that shares
  // it, reshapes included); 0 for an undefined array. PyTorch calls it a tensor's _version.
  std::uint64_t version() const {
    return storage_ ? storage_->version.load(std::memory_order_relaxed) : 0;
  }

 private:
  struct Storage {
    explicit Storage(std::size_t bytes);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    void bump_version() { version.fetch_add(1, std::memory_order_relaxed); }
    void* pointer;
    std::size_t bytes;
    // Atomic: the workers of one parallel kernel may each ask for the output's pointer.
    std::atomic<std::uint64_t> version{0};
  };
  NDArray(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype)
      : storage_(std::move(storage)), shape_(shape), dtype_(dtype) {}
  void check_dtype(DType requested) const;
  Index flat_index(std::initializer_list<Index> index) const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  DType dtype_ = kFloat32;
};

template <class T>
T* NDArray::data() {
  check_dtype(dtype_of<T>());
  storage_->bump_version();
  return static_cast<T*>(storage_->pointer);
}

template <class T>
const T* NDArray::data() const {
  check_dtype(dtype_of<T>());
  return static_cast<const T*>(storage_->pointer);
}

// Resolves a list of sizes with at most one -1 into a shape of `numel` elements.
Shape infer_shape(std::initializer_list<Index> sizes, Index numel, std::string_view op);

// Checks that an array is defined, throwing "op: <what> is undefined" otherwise.
void check_defined(const NDArray& x, std::string_view op, std::string_view what = "input");
// Checks equal shapes, throwing "op: shapes [..] and [..] differ".
void check_same_shape(const NDArray& a, const NDArray& b, std::string_view op);
// Checks equal dtypes, throwing "op: dtypes float32 and float64 differ".
void check_same_dtype(const NDArray& a, const NDArray& b, std::string_view op);

}  // namespace attend
