// Private: the CPU feature detection of one architecture (src/cpu/cpu_<arch>.cpp; each
// file compiles to nothing on the other architectures, cpu.cpp has the fallback for any
// other processor: no features, the scalar family only).
#pragma once

#include "fixq/cpu.h"

namespace fixq::cpu_detail {

// The features of fixq/cpu.h this CPU and OS provide, of the target architecture's bits.
FeatureMask detect_features();

}  // namespace fixq::cpu_detail
