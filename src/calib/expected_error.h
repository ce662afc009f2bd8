// Private: the expected squared quantization error of binned mass under one (scale, zero
// point), the objective of the Mse observer.
#pragma once

#include <cstdint>
#include <span>

#include "calib/binned_mass.h"
#include "fixq/arith.h"

namespace fixq::calib_detail {

// Sum over bins of count * E[(x - Q(x))^2] with x uniform over the bin (a point mass when
// lo == hi), where Q(x) = (clamp(round(x / scale) + zp, qmin, qmax) - zp) * scale is
// quantize followed by dequantize. Computed in closed form per bin, in O(1): the error of
// each rounding cell is integrated exactly, the cells wholly inside a bin in one step.
// Idealisations, each of measure zero or of relative size 2^-24: round-to-nearest is
// taken as exact (the tie rule does not matter for a density), and neither x / scale nor
// the level (q - zp) * scale is rounded to float32 as quantize_value / dequantize_value do.
double expected_squared_error(std::span<const MassBin> bins, double scale, int32_t zp, IntRange range);

}  // namespace fixq::calib_detail
