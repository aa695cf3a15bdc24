// The encoder-decoder interface: what every model shares.
#include "seq/model.h"

#include "autograd/ops.h"

namespace attend::seq {
namespace {

Tensor rows_of(const Tensor& t, const Tensor& rows) {
  return t.defined() ? index_select(t, 0, rows) : Tensor();
}

}  // namespace

Encoded select_rows(const Encoded& encoded, const Tensor& rows) {
  return {rows_of(encoded.memory, rows), rows_of(encoded.keys, rows), rows_of(encoded.mask, rows),
          rows_of(encoded.initial_state, rows)};
}

}  // namespace attend::seq
