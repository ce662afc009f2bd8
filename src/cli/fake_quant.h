// Private to the CLI: round-trip a float tensor through quantization and measure the error.
#pragma once

#include <string>
#include <vector>

#include "fixq/metrics.h"
#include "fixq/quant.h"

namespace fixq::cli {

// dequantize(quantize(x)) under params, compared with x.
ErrorStats quantization_error(const std::vector<float>& x, const Shape& shape, const QuantParams& params);

// "%.2f" with "inf" for infinities, for SQNR columns.
std::string fmt_db(double db);

}  // namespace fixq::cli
