// Private: this core's cache sizes, for the decisions of the kernels' drivers.
#pragma once

#include <cstdint>

namespace fixq::cpu {

// This core's L2 in bytes (the C library's figure; 1 MiB, Zen 4/5's, where it has none).
int64_t l2_bytes();

// Whether weights of this many bytes stay in L2 from one product with them to the next (a
// GRU step's recurrent product): within half of it, the rest left to what else a step reads.
inline bool stays_in_l2(int64_t bytes) { return bytes <= l2_bytes() / 2; }

}  // namespace fixq::cpu
