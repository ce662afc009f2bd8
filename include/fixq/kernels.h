// fixq/kernels.h — which kernel each operation runs now, as oneDNN's impl_info_str() says
// which implementation a primitive chose.
//
// Every module picks its kernels at run time (fixq/cpu.h: the CPU's features, capped by
// FIXQ_ISA or set_isa_override) and reports the one it picked; this gathers the reports:
// what `fixq info` and the bench headers print.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fixq/cpu.h"

namespace fixq {

// Every module's report (KernelChoice, fixq/cpu.h), in a fixed order.
std::vector<KernelChoice> active_kernels();
// The kernel of one operation of active_kernels(); throws fixq::Error for an unknown one.
std::string active_kernel(std::string_view operation);

}  // namespace fixq
