// Array wrappers around the vector lane primitives (arith/lane_scale_lanes.h over simd/lanes_<family>.h), so
// the test can hold each family's vectors to the scalar lane definitions. Defined in
// lane_checks_avx2.cpp and lane_checks_avx512.cpp (the latter also built against SIMDe, in
// namespace avx512_emulated).
#pragma once

#include <cstdint>

#include "arith/lane_scale.h"

namespace fixq::lane_checks {

enum class Form { Pow2, Multiplier, WidePow2, WideMultiplier };

// out[i] = the lane form of `form` applied to a[i] (and b[i] for the wide products), all
// lanes with the same scale l; n a multiple of 16.
using Apply = void (*)(Form form, const LaneScale& l, const int32_t* a, const int32_t* b, int64_t n, int32_t* out);

namespace avx2 { void apply(Form, const LaneScale&, const int32_t*, const int32_t*, int64_t, int32_t*); }
namespace avx512 { void apply(Form, const LaneScale&, const int32_t*, const int32_t*, int64_t, int32_t*); }
namespace avx512_emulated { void apply(Form, const LaneScale&, const int32_t*, const int32_t*, int64_t, int32_t*); }

}  // namespace fixq::lane_checks
