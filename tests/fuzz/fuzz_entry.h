// The body of every libFuzzer target: the loaders take a path, so each input is written to
// one scratch file per process (reused for every input) and the target's loader is run
// on it through run_target() (loader_targets.h), as the regression test runs the corpus.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/loader_targets.h"

namespace fixq::fuzz {

// The scratch file lives in memory (memfd_create: no disk writes, which would bound the
// speed, and nothing left behind even by a crash); the loaders open it by its path
// /proc/self/fd/<fd>, which gives them a file description of their own.
class ScratchFile {
 public:
  ScratchFile() {
    fd_ = ::memfd_create("fixq-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) die("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() { ::close(fd_); }

  const std::string& path() const { return path_; }

  // Replaces the whole content with the input's bytes.
  void write(const uint8_t* data, size_t size) const {
    if (::ftruncate(fd_, 0) != 0) die("cannot truncate the scratch file");
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) die("cannot write the scratch file");
      done += static_cast<size_t>(n);
    }
  }

 private:
  // A failure of the harness itself, not of a loader: stop loudly.
  [[noreturn]] static void die(const char* what) {
    std::fprintf(stderr, "fixq fuzz harness: %s\n", what);
    std::abort();
  }

  int fd_ = -1;
  std::string path_;
};

inline int fuzz_one_input(std::string_view target_name, const uint8_t* data, size_t size) {
  static const Target& target = find_target(target_name);
  static const ScratchFile file;
  file.write(data, size);
  run_target(target, file.path());
  return 0;  // libFuzzer: the input may join the corpus
}

}  // namespace fixq::fuzz
