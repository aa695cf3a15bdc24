#include "nn/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "tensor/error.h"

namespace attend::nn {
namespace {

// Two writers in one process never share a temporary name, nor do two processes (pid).
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

std::string errno_message(int error_number) {
  return std::system_category().message(error_number);
}

// Makes the rename itself durable: a directory entry reaches the disk when the directory
// is synced. Some file systems cannot sync a directory; the file is in place by then, so
// that failure is ignored.
void sync_folder_of(const std::string& path) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), temporary_path_(temporary_name(path_)) {
  if (path_.empty()) fail("cannot write a file with an empty name");
  file_ = std::fopen(temporary_path_.c_str(), "wb");
  if (file_ == nullptr) fail_with_errno("cannot create the temporary file", errno);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(temporary_path_.c_str());
}

void AtomicFileWriter::fail_with_errno(const char* step, int error_number) {
  fail("cannot write '{}': {} '{}': {}", path_, step, temporary_path_, errno_message(error_number));
}

void AtomicFileWriter::write(const void* data, std::size_t bytes) {
  if (file_ == nullptr) fail("cannot write '{}': the file is already committed", path_);
  if (bytes == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, bytes, file_) != bytes)
    fail_with_errno("cannot write the temporary file", errno != 0 ? errno : EIO);
}

void AtomicFileWriter::commit() {
  if (file_ == nullptr) fail("cannot write '{}': the file is already committed", path_);
  errno = 0;
  if (std::fflush(file_) != 0)
    fail_with_errno("cannot flush the temporary file", errno != 0 ? errno : EIO);
  if (::fsync(::fileno(file_)) != 0) fail_with_errno("cannot fsync the temporary file", errno);
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) fail_with_errno("cannot close the temporary file", errno);
  if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0)
    fail_with_errno("cannot rename the temporary file", errno);
  committed_ = true;
  sync_folder_of(path_);
}

}  // namespace attend::nn
