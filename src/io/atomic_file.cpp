// write_file_atomically: temporary file, fsync, rename.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "fixq/error.h"

namespace fixq {

AtomicFileWriter::AtomicFileWriter(const std::string& target, const char* what) : target_(target), what_(what) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path t(target);
  const std::filesystem::path dir = t.has_parent_path() ? t.parent_path() : ".";
  // O_EXCL makes the name ours; a name left over by a crashed process is skipped.
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    const std::string name = std::string(".").append(t.filename().string()) + ".tmp." +
                             std::to_string(::getpid()) + "." + std::to_string(counter++);
    path_ = (dir / name).string();
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST && errno != EINTR)
      fail_io(errno, what_, ": ", target_, ": cannot create a temporary file in its directory");
  }
  if (fd_ < 0) fail_io(EEXIST, what_, ": ", target_, ": cannot find a free temporary file name");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(path_.c_str());
}

void AtomicFileWriter::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail_io(errno, what_, ": ", target_, ": write failed");
    p += put;
    n -= static_cast<std::size_t>(put);
  }
}

// Makes the bytes durable, then atomically puts the file in the target's place.
void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) fail_io(errno, what_, ": ", target_, ": fsync failed");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail_io(errno, what_, ": ", target_, ": close failed");
  if (::rename(path_.c_str(), target_.c_str()) != 0)
    fail_io(errno, what_, ": ", target_, ": cannot rename the temporary file over it");
  committed_ = true;
}

void write_file_atomically(const std::string& path,
                           std::initializer_list<std::pair<const void*, std::size_t>> parts,
                           const char* what) {
  AtomicFileWriter tmp(path, what);
  for (const auto& [data, n] : parts) tmp.write(data, n);
  tmp.commit();
}

void make_directories(const std::string& dir, const char* what) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    fail(what, ": ", dir, " exists and is not a directory");
  std::filesystem::create_directories(dir, ec);
  if (ec) fail_io(ec.value(), what, ": ", dir, ": cannot create the directory");
}

}  // namespace fixq
