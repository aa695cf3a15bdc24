// The training canvases' regions kept in a file instead of in memory. Lesson 09 trains on
// 24,000 canvases: their regions, 24,000 x 64 x 66 float32 numbers, take 405 MB, and a
// training step reads only the 64 canvases of its batch. So the regions are written once to
// an unnamed temporary file and each batch's rows are read back from it. The system keeps
// the file's pages in its page cache while memory is free (so a read costs a copy, not a
// disk access) and can drop them when another program needs the memory, which it cannot do
// with the program's own arrays. The numbers read are the bytes written: training is the same.
#pragma once

#include <cstdio>
#include <memory>
#include <vector>

#include "autograd/tensor.h"

namespace attend::captioning {

class RegionFile {
 public:
  RegionFile() = default;
  // Room for `count` canvases of float32 [regions, features] each, in a new temporary file
  // (std::tmpfile: removed by the system when the program ends, however it ends).
  RegionFile(Index count, Index regions, Index features);

  // Writes regions float32 [n, regions, features] as canvases first .. first + n - 1.
  void write(Index first, const NDArray& regions);
  // Canvases `indices` (each written before), as a Tensor [indices, regions, features].
  // Threads may call this at the same time (models trained side by side); not during write.
  Tensor rows(const std::vector<Index>& indices) const;

  Shape shape() const { return {count_, regions_, features_}; }
  Index size() const { return count_; }

 private:
  std::shared_ptr<std::FILE> file_;
  Index count_ = 0, regions_ = 0, features_ = 0;
};

}  // namespace attend::captioning
