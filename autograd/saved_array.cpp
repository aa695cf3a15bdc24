#include "autograd/saved_array.h"

namespace attend {

void SavedArray::report_modified() const {
  throw SavedArrayModified(fmt::format(
      "its saved {} {} was modified in place after the forward (version {} -> {}), so the "
      "gradient computed from it would be wrong. Change a copy instead (clone it before "
      "changing it), or change it only after backward()",
      what_, array_.shape(), version_, array_.version()));
}

}  // namespace attend
