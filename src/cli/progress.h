// Private to the CLI: a one-line progress bar on stderr, shown only when stderr is a
// terminal, so that piped or logged runs stay quiet (no \r lines in a log). It redraws only
// when the shown percentage changes, so fine-grained advance() calls cost nothing visible.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace fixq::cli {

class Progress {
 public:
  Progress(std::string label, int64_t total) : label_(std::move(label)), total_(total), on_(isatty(STDERR_FILENO) == 1) {}
  ~Progress() {
    if (on_ && drawn_) std::fprintf(stderr, "\n");
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(int64_t by = 1) {
    done_ += by;
    if (!on_ || total_ <= 0) return;
    const int64_t percent = 100 * std::min(done_, total_) / total_;
    if (drawn_ && percent == shown_percent_) return;
    shown_percent_ = percent;
    const int width = 40;
    const auto filled = static_cast<size_t>(width * percent / 100);
    std::fprintf(stderr, "\r%s [%s%s] %3lld%% %lld/%lld", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), static_cast<long long>(percent), static_cast<long long>(done_),
                 static_cast<long long>(total_));
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  int64_t shown_percent_ = -1;
  bool on_;
  bool drawn_ = false;
};

}  // namespace fixq::cli
