// Private to the CLI: quantization schemes from command-line parts. The error of a round
// trip (quantization_error) and the dB format (fmt_db) are the library's, fixq/report.h.
#pragma once

#include "fixq/quant.h"
#include "fixq/report.h"

namespace fixq::cli {

// A scheme from its parts, validated.
QuantScheme make_scheme(int bits, bool is_signed, Symmetry sym, ScaleKind kind, Granularity g,
                        int axis = 0, int64_t group_size = 0);

}  // namespace fixq::cli
