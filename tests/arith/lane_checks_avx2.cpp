// The avx2 family's lane forms on arrays (lane_checks.h).
#include "simd/lanes_avx2.h"
#include "lane_checks_body.h"

namespace fixq::lane_checks::FIXQ_KERNEL_NS(avx2) {

void apply(Form form, const LaneScale& l, const int32_t* a, const int32_t* b, int64_t n, int32_t* out) {
  apply_lanes<simd::Avx2>(form, l, a, b, n, out);
}

}  // namespace fixq::lane_checks::FIXQ_KERNEL_NS(avx2)
