// Private: the streamed histogram of one channel behind the Percentile and Mse observers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fixq::calib_detail {

// `bins` equal bins of width w over [lo, lo + bins * w). When data falls outside, the grid
// is re-laid with width w * 2^k, k >= 0 as small as possible: each aligned group of 2^k old
// bins becomes one new bin (counts are added, never split), shifted by a whole number of
// new bins so that the non-empty old bins and the new data sit centred in the new span.
// k == 0 is a pure shift, so nothing is lost while the data still fits. Consequences:
// counts are exact per bin; the data spans more than half of the bins minus one after
// every growth (at k - 1 it did not fit), and keeps doing so as it only widens; a value
// lands in a bin whose interval contains it, up to rounding of the edge arithmetic.
class StreamingHistogram {
 public:
  explicit StreamingHistogram(int bins);

  // Grows the span to contain [lo, hi] (finite, lo <= hi), as described above. The first
  // call places the bins exactly on [lo, hi] (a narrow span around lo if lo == hi).
  void cover(double lo, double hi);
  // Counts x into its bin. x must lie in the covered span; a value on the upper edge (or
  // off by a rounding of the edge arithmetic) goes to the nearest edge bin.
  void add(float x);

  bool empty() const { return total_ == 0; }
  uint64_t total() const { return total_; }
  double lo() const { return lo_; }
  double width() const { return width_; }
  std::span<const uint64_t> counts() const { return counts_; }

 private:
  std::vector<uint64_t> counts_;
  double lo_ = 0.0;
  double width_ = 0.0;  // 0 until the first cover()
  uint64_t total_ = 0;
};

}  // namespace fixq::calib_detail
