// Private: percentile ranges of a channel's binned mass (the Percentile observer).
#pragma once

#include "calib/binned_mass.h"
#include "fixq/quant.h"

namespace fixq::calib_detail {

// Rank convention, numpy's default ("linear"): the q-quantile of n sorted samples lies at
// rank q * (n - 1), interpolated between neighbours. In the uniform-within-bin model the
// k-th sample (from 0) sits at cumulative mass k + 1/2, so the estimate is the value at
// mass q * (n - 1) + 1/2; it is within about one bin width of the exact sample quantile.
//
// Asymmetric targets: [quantile(1 - p/100), quantile(p/100)].
// Symmetric targets: t = the p-th percentile of |x| (the t with a fraction p/100 of the
// values in [-t, t]), returned as [-t, t] cut to [min, max]; a symmetric quantizer clips
// exactly the values with |x| > t, so this clips (100 - p)% of them, as p promises.
// p == 100 returns [min, max] exactly. The result always lies within [min, max].
Range percentile_range(const BinnedMass& mass, float min, float max, double percentile, bool symmetric);

}  // namespace fixq::calib_detail
