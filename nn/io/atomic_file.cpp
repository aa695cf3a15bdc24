#include "nn/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <string_view>
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

// The pid in a temporary name of `path` ("model.ckpt.tmp-<pid>-<n>"), or 0 for any other name.
pid_t temporary_owner(const std::string& name, const std::string& target) {
  const std::string prefix = target + ".tmp-";
  if (!name.starts_with(prefix)) return 0;
  const std::string rest = name.substr(prefix.size());
  const std::size_t dash = rest.find('-');
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == s.npos;
  };
  if (dash == std::string::npos || !digits(std::string_view(rest).substr(0, dash)) ||
      !digits(std::string_view(rest).substr(dash + 1)))
    return 0;
  return static_cast<pid_t>(std::stol(rest.substr(0, dash)));
}

// Removes what a killed writer of the same file left behind: its temporary files, each as
// large as the file. Only names of this file's own pattern, and only of processes that no
// longer run (a live one may be writing its copy right now, this process included).
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const pid_t owner =
        temporary_owner(entry.path().filename().string(), target.filename().string());
    if (owner <= 0 || owner == ::getpid()) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // still running (or not ours)
    fs::remove(entry.path(), error);  // best effort: the new file is already in place
  }
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
  remove_stale_temporaries(path_);
}

}  // namespace attend::nn
