#include "arith/lanes_avx2.h"
#include "lane_checks.h"

namespace fixq::lane_checks::FIXQ_KERNEL_NS(avx2) {

void apply(Form form, const LaneScale& l, const int32_t* a, const int32_t* b, int64_t n, int32_t* out) {
  using namespace avx2_lanes;
  const LaneScaleRegs s = lane_scale_regs(l);
  for (int64_t i = 0; i < n; i += 8) {
    const V x = _mm256_loadu_si256(reinterpret_cast<const V*>(a + i)), y = _mm256_loadu_si256(reinterpret_cast<const V*>(b + i));
    V r;
    switch (form) {
      case Form::Pow2: r = apply_pow2(x, s); break;
      case Form::Multiplier: r = apply_multiplier(x, s); break;
      case Form::WidePow2: r = apply_wide_pow2(x, y, s); break;
      default: r = apply_wide_multiplier(x, y, s); break;
    }
    _mm256_storeu_si256(reinterpret_cast<V*>(out + i), r);
  }
}

}  // namespace fixq::lane_checks::FIXQ_KERNEL_NS(avx2)
