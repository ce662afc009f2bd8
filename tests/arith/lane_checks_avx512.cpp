#include "arith/lanes_avx512.h"
#include "lane_checks.h"

namespace fixq::lane_checks::FIXQ_KERNEL_NS(avx512) {

void apply(Form form, const LaneScale& l, const int32_t* a, const int32_t* b, int64_t n, int32_t* out) {
  using namespace avx512_lanes;
  const LaneScaleRegs s = lane_scale_regs(l);
  for (int64_t i = 0; i < n; i += 16) {
    const V x = _mm512_loadu_si512(a + i), y = _mm512_loadu_si512(b + i);
    V r;
    switch (form) {
      case Form::Pow2: r = apply_pow2(x, s); break;
      case Form::Multiplier: r = apply_multiplier(x, s); break;
      case Form::WidePow2: r = apply_wide_pow2(x, y, s); break;
      default: r = apply_wide_multiplier(x, y, s); break;
    }
    _mm512_storeu_si512(out + i, r);
  }
}

}  // namespace fixq::lane_checks::FIXQ_KERNEL_NS(avx512)
