// Private: a cell's unit-update constants as plain values and pointers, and the exact
// domain that evaluates unit_update (gru/int/unit_update.h) over them. A formula header
// (fixq/host_device.h): the reference loop (gru/int/step_intonly.cpp) runs this domain on the
// CPU, and a GPU backend runs the same domain, over the same constants copied to device
// memory, on the device.
//
// Every intermediate is bounded far inside int64 (gru/int/step_intonly.cpp states the bounds);
// each result is saturated to its operator's range.
#pragma once

#include <cstdint>

#include "fixq/arith.h"
#include "fixq/host_device.h"
#include "gru/int/lut_eval.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {

inline constexpr int kOperands = 13;  // the Operand enumerators
inline constexpr int kUnitBiases = 4;
inline constexpr int kUnitLuts = 3;

// Indexed by the unit update's names; the bias and table pointers point into the memory
// of whichever processor evaluates the domain.
struct UnitConstants {
  int32_t zp[kOperands];                 // [Operand]
  IntRange range[kOperands];             // [Operand]
  FixedPointScale ratio[kUnitScales];    // [UnitScale]
  LutView lut[kUnitLuts];                // [UnitLut]
  const int32_t* bias[kUnitBiases];      // [UnitBias], H entries each
  int32_t bias_zp[kUnitBiases];          // the zero point of each bias's target operator
  int32_t q_one;                         // 1 in z_out's parameters (docs/spec.md 4.3)
};

// unit_update's domain on exact int64 values for hidden unit `unit`.
struct ExactUnitDomain {
  using V = int64_t;
  const UnitConstants& c;
  int64_t unit;

  FIXQ_HOST_DEVICE V sub(V a, V b) const { return a - b; }
  FIXQ_HOST_DEVICE V add(V a, V b) const { return a + b; }
  FIXQ_HOST_DEVICE V less_zp(Operand o, V v) const { return v - c.zp[static_cast<int>(o)]; }
  FIXQ_HOST_DEVICE V plus_zp(Operand o, V v) const { return v + c.zp[static_cast<int>(o)]; }
  FIXQ_HOST_DEVICE V sat(Operand o, V v) const {
    const IntRange r = c.range[static_cast<int>(o)];
    return saturate(v, r.qmin, r.qmax);
  }
  FIXQ_HOST_DEVICE V scale(UnitScale s, V v) const { return c.ratio[static_cast<int>(s)].apply(v); }
  FIXQ_HOST_DEVICE V product(UnitScale s, V a, V b) const { return c.ratio[static_cast<int>(s)].apply(a * b); }
  FIXQ_HOST_DEVICE V bias(UnitBias b) const {
    const int i = static_cast<int>(b);
    return int64_t{c.bias[i][unit]} + c.bias_zp[i];
  }
  FIXQ_HOST_DEVICE V lut(UnitLut l, V v) const {
    return lookup_exact(c.lut[static_cast<int>(l)], static_cast<int32_t>(v));
  }
  FIXQ_HOST_DEVICE V one_in_z_out() const { return c.q_one; }
};

// h' of one hidden unit from its six GEMM outputs (each in its operator's parameters) and
// its state h.
FIXQ_HOST_DEVICE inline int32_t update_unit_exact(const UnitConstants& c, int64_t unit, int32_t wx_z, int32_t wx_r,
                                                  int32_t wx_g, int32_t rh_z, int32_t rh_r, int32_t rh_g, int32_t h) {
  ExactUnitDomain d{c, unit};
  const UnitInputs<ExactUnitDomain> in{wx_z, wx_r, wx_g, rh_z, rh_r, rh_g, h};
  return static_cast<int32_t>(unit_update(d, in));
}

}  // namespace fixq::gru_detail
