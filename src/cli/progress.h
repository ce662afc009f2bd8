// Private to the CLI: a one-line progress bar on stderr, shown only when stderr is a
// terminal, so that piped or logged runs stay quiet.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fixq::cli {

class Progress {
 public:
  Progress(std::string label, int64_t total) : label_(std::move(label)), total_(total), on_(isatty(STDERR_FILENO) == 1) {}
  ~Progress() {
    if (on_ && drawn_) std::fprintf(stderr, "\n");
  }
  void advance(int64_t by = 1) {
    done_ += by;
    if (!on_ || total_ <= 0) return;
    const int width = 40;
    const int filled = static_cast<int>(width * std::min<int64_t>(done_, total_) / total_);
    std::fprintf(stderr, "\r%s [%s%s] %lld/%lld", label_.c_str(), std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), '.').c_str(), static_cast<long long>(done_),
                 static_cast<long long>(total_));
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool on_;
  bool drawn_ = false;
};

}  // namespace fixq::cli
