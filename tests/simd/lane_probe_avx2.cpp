// The avx2 family's lane primitives on arrays (lane_probe.h).
#include "simd/lanes_avx2.h"

#include "lane_probe_body.h"

namespace fixq::lane_probe::FIXQ_KERNEL_NS(avx2) {

Results probe(const Inputs& in) { return probe_lanes<simd::Avx2>(in); }

}  // namespace fixq::lane_probe::FIXQ_KERNEL_NS(avx2)
