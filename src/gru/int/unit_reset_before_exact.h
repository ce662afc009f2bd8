// Private: the exact int64 domain of the reset-before unit update
// (gru/int/unit_update_reset_before.h): the reset-after cell's exact domain
// (gru/int/unit_constants.h) plus the two ratios only this cell has. A formula header
// (fixq/host_device.h), as unit_constants.h is.
#pragma once

#include <cstdint>

#include "fixq/arith.h"
#include "fixq/host_device.h"
#include "gru/int/unit_constants.h"
#include "gru/int/unit_update_reset_before.h"

namespace fixq::gru_detail {

struct ResetBeforeConstants {
  FixedPointScale ratio[kResetBeforeScales];  // [ResetBeforeScale]
};

struct ExactResetBeforeDomain : ExactUnitDomain {
  const ResetBeforeConstants& rb;

  using ExactUnitDomain::product;
  using ExactUnitDomain::scale;
  FIXQ_HOST_DEVICE V scale(ResetBeforeScale s, V v) const { return rb.ratio[static_cast<int>(s)].apply(v); }
  // |a|, |b| <= 65535 (differences of 16-bit operators): a * b < 2^32 is exact in int64.
  FIXQ_HOST_DEVICE V product(ResetBeforeScale s, V a, V b) const { return rb.ratio[static_cast<int>(s)].apply(a * b); }
};

}  // namespace fixq::gru_detail
