// Private to the CLI: round-trip a float tensor through quantization and measure the error.
#pragma once

#include <string>
#include <vector>

#include "fixq/metrics.h"
#include "fixq/quant.h"

namespace fixq::cli {

// dequantize(quantize(x)) under params, compared with x.
ErrorStats quantization_error(const std::vector<float>& x, const Shape& shape, const QuantParams& params);

// A scheme from its parts, validated.
QuantScheme make_scheme(int bits, bool is_signed, Symmetry sym, ScaleKind kind, Granularity g,
                        int axis = 0, int64_t group_size = 0);

// "%.2f" with "inf" for infinities, for SQNR columns.
std::string fmt_db(double db);

}  // namespace fixq::cli
