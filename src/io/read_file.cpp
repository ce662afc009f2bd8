// The loaders' shared file access (read_file.h).
#include "io/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "fixq/error.h"

namespace fixq::io_detail {

int open_regular_file(const char* loader, const std::string& path, uint64_t* size) {
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) fail_io(errno, loader, ": ", path, ": cannot open");
  struct stat st {};
  const int stat_error = ::fstat(fd, &st) != 0 ? errno : 0;
  if (stat_error != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (stat_error != 0) fail_io(stat_error, loader, ": ", path, ": cannot stat");
    fail(loader, ": ", path, ": not a regular file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

void read_exact(const char* loader, const std::string& path, int fd, void* dst, uint64_t n, int64_t offset) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = offset < 0 ? ::read(fd, p, n) : ::pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_io(errno, loader, ": ", path, ": read error");
    if (got == 0) fail(loader, ": ", path, ": truncated: the file ended while reading it");
    p += got;
    n -= static_cast<uint64_t>(got);
    if (offset >= 0) offset += got;
  }
}

}  // namespace fixq::io_detail
