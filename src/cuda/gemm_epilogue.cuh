// Private (device code): an output element of a product through its epilogue, by the
// formulas the CPU evaluates (gemm/epilogue_formulas.h), and the stores of each output type.
#pragma once

#include <cstdint>

#include "cuda/gemm_args.h"
#include "gemm/epilogue_formulas.h"

namespace fixq::cuda::detail {

// Stores the integer y (already inside t's range) as element i of an s8 / u8 / s16 array.
__device__ __forceinline__ void store_int(void* out, IntType t, int64_t i, int32_t y) {
  if (t == IntType::S16) static_cast<int16_t*>(out)[i] = static_cast<int16_t>(y);
  else if (t == IntType::S8) static_cast<int8_t*>(out)[i] = static_cast<int8_t>(y);
  else static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(y);
}

__device__ __forceinline__ int32_t load_int(const void* in, IntType t, int64_t i) {
  if (t == IntType::S16) return static_cast<const int16_t*>(in)[i];
  if (t == IntType::S8) return static_cast<const int8_t*>(in)[i];
  return static_cast<const uint8_t*>(in)[i];
}

// Output (row, col) of the product from its exact sum acc.
template <EpilogueKind kKind>
__device__ __forceinline__ void epilogue_store(const EpilogueArgs& e, int64_t row, int64_t col, int64_t acc) {
  const int64_t at = row * e.ldo + col;
  if constexpr (kKind == EpilogueKind::S32) {
    static_cast<int32_t*>(e.out)[at] = static_cast<int32_t>(acc);  // in range: the weights' bound
  } else {
    const int32_t azp = e.azp_rows != nullptr ? e.azp_rows[row] : e.azp;
    if (e.acc_hi != nullptr) acc += int64_t{e.acc_hi[row * e.ld_hi + col]} * 256;
    const int64_t v = gemm_detail::compensated(acc, azp, e.colsum[col]);
    if constexpr (kKind == EpilogueKind::F32) {
      const float sa = e.scale_a_rows != nullptr ? e.scale_a_rows[row] : e.scale_a;
      const float sb = e.scale_b_cols != nullptr ? e.scale_b_cols[col] : e.scale_b;
      static_cast<float*>(e.out)[at] = e.bias_f != nullptr ? gemm_detail::dequant_element_bias(v, sa, sb, e.bias_f[col])
                                                           : gemm_detail::dequant_element(v, sa, sb);
    } else {
      const FixedPointScale s = e.scale_cols != nullptr ? e.scale_cols[col] : e.scale;
      const int32_t bias = e.bias_i != nullptr ? e.bias_i[col] : 0;
      store_int(e.out, e.out_type, at, gemm_detail::requant_element(v, bias, s, e.zp_out, e.clamp));
    }
  }
}

}  // namespace fixq::cuda::detail
