// Private: what the two integer reference loops (step_intonly.cpp, reset-after;
// step_reset_before_intonly.cpp) share: loading and storing an operator's integers at its
// storage width, and the requantize epilogue of one of the cell's GEMMs. Integer only:
// included by *_intonly.cpp files, which are compiled with -mgeneral-regs-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "gru/int/plan.h"

namespace fixq::gru_detail::intonly {

// The i-th integer of an int8 or int16 buffer, widened.
inline int32_t load(const void* base, IntType t, int64_t i) {
  if (t == IntType::S16) {
    int16_t v;
    std::memcpy(&v, static_cast<const int16_t*>(base) + i, sizeof v);
    return v;
  }
  return static_cast<const int8_t*>(base)[i];
}

// Stores v, already within the operator's range, at its storage width.
inline void store(void* base, IntType t, int64_t i, int32_t v) {
  if (t == IntType::S16) {
    const auto s = static_cast<int16_t>(v);
    std::memcpy(static_cast<int16_t*>(base) + i, &s, sizeof s);
  } else {
    static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v);
  }
}

// y = sat(R_n(v) + zp): a GEMM requantized into `out`, for the rows whose scales are `scale`
// and the input's zero point azp (which must outlive the epilogue).
inline RequantEpilogue requant_to(const OpQ& out, std::span<const FixedPointScale> scale, const int32_t* azp) {
  RequantEpilogue e;
  e.azp = std::span<const int32_t>(azp, 1);
  e.scale = scale;
  e.zp_out = out.zp;
  e.out_type = out.storage;
  e.out_min = out.range.qmin;
  e.out_max = out.range.qmax;
  return e;
}

}  // namespace fixq::gru_detail::intonly
