// The body of lane_checks_<family>.cpp, once over the family's lane primitives L: each
// family's lane forms (arith/lane_scale_lanes.h) applied to arrays.
#pragma once

#include "arith/lane_scale_lanes.h"
#include "lane_checks.h"

namespace fixq::lane_checks {
namespace {

template <class L>
void apply_lanes(Form form, const LaneScale& l, const int32_t* a, const int32_t* b, int64_t n, int32_t* out) {
  const LaneScaleRegs<L> s = lane_scale_regs<L>(l);
  for (int64_t i = 0; i < n; i += L::kLanes) {
    const auto x = L::load(a + i), y = L::load(b + i);
    switch (form) {
      case Form::Pow2: L::store(out + i, apply_pow2<L>(x, s)); break;
      case Form::Multiplier: L::store(out + i, apply_multiplier<L>(x, s)); break;
      case Form::WidePow2: L::store(out + i, apply_wide_pow2<L>(x, y, s)); break;
      default: L::store(out + i, apply_wide_multiplier<L>(x, y, s)); break;
    }
  }
}

}  // namespace
}  // namespace fixq::lane_checks
