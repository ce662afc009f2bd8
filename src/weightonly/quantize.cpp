// PackedWeights::quantize: per-group parameters and codes with fixq's quantizer
// (fixq/quant.h), then the canonical packing of from_parts.
#include <algorithm>
#include <vector>

#include "fixq/error.h"
#include "fixq/weightonly.h"
#include "fixq/quant.h"

namespace fixq {

PackedWeights PackedWeights::quantize(const float* w, int64_t k, int64_t n, const GroupQuantSpec& spec) {
  require(spec.bits == 2 || spec.bits == 4 || spec.bits == 8, "packed weights have 2, 4 or 8 bits, not ", spec.bits);
  if (k <= 0 || n <= 0) fail("packed weights need K > 0 and N > 0, got K = ", k, ", N = ", n);
  require(w != nullptr, "quantize: null weight pointer");
  const int64_t per = 32 / spec.bits;
  if (spec.group_size <= 0 || k % spec.group_size != 0)
    fail("group size ", spec.group_size, " does not divide K = ", k);
  if (spec.group_size % per != 0)
    fail("group size ", spec.group_size, " is not a multiple of 32 / ", spec.bits, " = ", per,
         ": a packed int32 would straddle two groups");

  QuantScheme scheme;
  scheme.format = IntFormat::make(spec.bits, false);
  scheme.symmetry = spec.symmetry;
  scheme.granularity = Granularity::PerGroup;
  scheme.axis = 0;
  scheme.group_size = spec.group_size;
  const Shape shape{k, n};
  std::vector<Range> ranges = minmax_ranges(w, shape, scheme);  // throws for NaN / inf
  // A range of zero width has no scale. The quantizer widens every range to contain 0
  // anyway, so only an all-zero group is left without one: any range then represents it.
  for (Range& r : ranges) {
    r.min = std::min(r.min, 0.0f);
    r.max = std::max(r.max, 0.0f);
    if (r.min == r.max) r = Range{-1.0f, 1.0f};
  }
  const QuantParams params = params_from_ranges(scheme, shape, ranges);
  std::vector<uint8_t> q(static_cast<size_t>(k * n));
  fixq::quantize(w, shape, params, q.data());
  return from_parts(spec.bits, k, n, q, params.scale, params.zero_point, {});
}

}  // namespace fixq
