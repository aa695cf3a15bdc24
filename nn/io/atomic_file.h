// AtomicFileWriter: writes a file so that whoever reads it later finds either the old
// contents or the complete new ones, never a half-written file.
//
// The bytes go to a temporary file next to the target ("model.ckpt.tmp-<pid>-<n>"), which
// is flushed to the disk (fsync) and only then renamed over the target. On POSIX, rename()
// within one file system replaces the target in one step, so a crash, a full disk or a
// killed process at any moment leaves the previous file intact. If anything fails, or the
// writer is destroyed before commit(), the temporary file is removed. A killed process cannot
// remove its own: the next commit() of the same file removes the temporaries of that file
// whose process no longer runs.
//
//   AtomicFileWriter out("model.ckpt");
//   out.write(header, 24);
//   out.write(data, n);
//   out.commit();              // only now does model.ckpt change
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace attend::nn {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();  // removes the temporary file unless commit() succeeded
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, std::size_t bytes);
  // Flushes, fsyncs and closes the temporary file, then renames it over the target.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temporary_path() const { return temporary_path_; }

 private:
  [[noreturn]] void fail_with_errno(const char* step, int error_number);

  std::string path_;
  std::string temporary_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace attend::nn
