// Private: the Mse observer's search for the clipping range of one channel.
#pragma once

#include "calib/binned_mass.h"
#include "fixq/quant.h"

namespace fixq::calib_detail {

// The range whose parameters, as params_from_ranges(target) derives them, minimise the
// expected squared error (expected_squared_error) of `mass`, the channel's values with
// extremes min < max. Every candidate contains 0, as params_from_ranges would widen it
// so anyway; let [a, b] be [min, max] so widened. Candidates shrink toward 0 by
// fractions f = 2^(-10 k / 199), k = 0..199 (steps of 3.5%, down to 1/1024), each scan
// refined by 15 fractions between the grid neighbours of its best:
//   Float, symmetric:   [-t, t] cut to [a, b] with t = f * max(-a, b);
//   Float, asymmetric:  [f_lo * a, f_hi * b]: first f_lo = f_hi, then each side alone in
//                       turn (coordinate descent) until neither moves (at most 8 rounds);
//   PowerOfTwo:         each exponent e from the one params_from_ranges gives [a, b] to
//                       10 finer ones; symmetric: the representable range at e; asymmetric:
//                       for each e the best window of 2^bits levels (zero point), found
//                       exactly when it covers the data, else by a coarse-to-fine scan.
//                       The result is exactly the representable range of the chosen
//                       (e, zero point), which params_from_ranges maps back to them.
// Ties (within 1e-12 relative) keep the wider candidate. Candidates that would need a
// scale too small for a normal float (data near FLT_MIN) are skipped.
Range mse_range(const BinnedMass& mass, float min, float max, const QuantScheme& target);

}  // namespace fixq::calib_detail
