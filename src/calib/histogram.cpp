// The streamed, exactly merging histogram of calib/histogram.h.
#include "calib/histogram.h"

#include <algorithm>
#include <cmath>

namespace fixq::calib_detail {

StreamingHistogram::StreamingHistogram(int bins) : counts_(static_cast<size_t>(bins), 0) {}

void StreamingHistogram::cover(double lo, double hi) {
  const size_t n = counts_.size();
  const double nd = static_cast<double>(n);
  if (total_ == 0) {
    if (hi > lo) {
      lo_ = lo;
      width_ = (hi - lo) / nd;
    } else {
      // A constant first batch defines no width. Any positive one is valid because later
      // growth merges exactly; a narrow span keeps the constant's bin precise.
      const double span = (lo != 0.0 ? std::abs(lo) : 1.0) * 0x1p-20;
      lo_ = lo - 0.5 * span;
      width_ = span / nd;
    }
    return;
  }
  if (lo >= lo_ && hi <= lo_ + nd * width_) return;
  size_t first = 0, last = n - 1;  // the non-empty old bins (total_ > 0: there is one)
  while (counts_[first] == 0) ++first;
  while (counts_[last] == 0) --last;
  for (int k = 0;; ++k) {
    const double w = std::ldexp(width_, k);
    const int shift = std::min(k, 63);  // bins < 2^21, so i >> 63 == 0 as i >> k would be
    // Old bin i goes to new bin j + (i >> k) and the new grid starts at lo_ - j * w. The
    // feasible j keep the non-empty old bins inside and reach down to lo and up to hi;
    // computed in double because the data bounds may be far away at small k.
    const double j_lo = std::max(-static_cast<double>(first >> shift), std::ceil((lo_ - lo) / w));
    const double j_hi =
        std::min(nd - 1.0 - static_cast<double>(last >> shift), std::floor((lo_ - hi) / w) + nd);
    if (j_lo > j_hi) continue;
    // Centred, to leave room for later data on both sides. |j| <= bins: the cast is safe.
    const int64_t j = static_cast<int64_t>(std::floor(0.5 * (j_lo + j_hi)));
    std::vector<uint64_t> moved(n, 0);
    for (size_t i = first; i <= last; ++i)
      moved[static_cast<size_t>(j + static_cast<int64_t>(i >> shift))] += counts_[i];
    counts_ = std::move(moved);
    lo_ -= static_cast<double>(j) * w;
    width_ = w;
    return;
  }
}

void StreamingHistogram::add(float x) {
  const size_t n = counts_.size();
  // Clamp in double before converting: the quotient is only approximately in [0, n].
  const double q = std::floor((static_cast<double>(x) - lo_) / width_);
  const size_t i = q <= 0.0 ? 0 : (q >= static_cast<double>(n - 1) ? n - 1 : static_cast<size_t>(q));
  ++counts_[i];
  ++total_;
}

}  // namespace fixq::calib_detail
