// The avx512 family's lane primitives on arrays (lane_probe.h).
#include "simd/lanes_avx512.h"

#include "lane_probe_body.h"

namespace fixq::lane_probe::FIXQ_KERNEL_NS(avx512) {

Results probe(const Inputs& in) { return probe_lanes<simd::Avx512>(in); }

}  // namespace fixq::lane_probe::FIXQ_KERNEL_NS(avx512)
