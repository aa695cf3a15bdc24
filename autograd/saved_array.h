// SavedArray: an array that an op keeps for its backward, with the version its memory had
// when it was saved.
//
// A backward formula reads the values of the forward: mul's needs both inputs, exp's its own
// output. If such an array is changed in place between the forward and backward() (through
// Tensor::data(), a span, set(...)), the formula would compute a wrong gradient with no sign
// of it. Every non-const access to an NDArray adds one to the version of its memory
// (tensor/ndarray.h), so the backward compares: a changed version is an error naming the op
// and the array, never a silent wrong gradient. PyTorch does the same with a tensor's
// _version ("one of the variables needed for gradient computation has been modified by an
// inplace operation").
//
//   SavedArray xv(x.data(), "input #0");          // in the forward
//   return make_op("log", log(xv), {x}, [xv](const NDArray& g) -> Grads {
//     return {g / xv.get()};                       // in the backward: checked
//   });
#pragma once

#include <cstdint>
#include <string_view>

#include "tensor/error.h"
#include "tensor/ndarray.h"

namespace attend {

// What SavedArray::get() throws; backward() turns it into an Error that starts with
// "backward of <op>: ".
class SavedArrayModified : public Error {
 public:
  using Error::Error;
};

class SavedArray {
 public:
  SavedArray() = default;
  // `what` names the array in the error message ("input #1", "output", "mask"); it must
  // outlive the SavedArray (a string literal).
  SavedArray(NDArray array, std::string_view what)
      : array_(std::move(array)), version_(array_.version()), what_(what) {}

  // The saved array, after checking that nothing changed it in place since it was saved.
  const NDArray& get() const {
    if (array_.version() != version_) report_modified();
    return array_;
  }
  operator const NDArray&() const { return get(); }  // NOLINT: reads like the array

  // The shape and dtype cannot change in place: no check needed.
  bool defined() const { return array_.defined(); }
  const Shape& shape() const { return array_.shape(); }
  int ndim() const { return array_.ndim(); }
  Index size(int axis) const { return array_.size(axis); }
  DType dtype() const { return array_.dtype(); }

 private:
  [[noreturn]] void report_modified() const;

  NDArray array_;
  std::uint64_t version_ = 0;
  std::string_view what_;
};

}  // namespace attend
