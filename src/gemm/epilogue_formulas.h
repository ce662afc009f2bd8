// Private: the GEMM epilogues of fixq/gemm.h, one output element at a time, stated once
// for every processor (a formula header, fixq/host_device.h). gemm_f32 and gemm_requant
// evaluate them after the exact integer accumulation; a GPU backend evaluates the same
// bodies in its kernels' epilogues, so both give the same bits.
#pragma once

#include <cstdint>

#include "fixq/arith.h"
#include "fixq/host_device.h"

namespace fixq::gemm_detail {

// The accumulator compensated for the activation zero point: acc - azp * colsum[n], exact
// (|acc| < 2^47 and |azp * colsum| < 2^48 for every operand type and K < 2^31).
FIXQ_HOST_DEVICE constexpr int64_t compensated(int64_t acc, int32_t azp, int64_t colsum) {
  return acc - int64_t{azp} * colsum;
}

// A float32 product and sum, each rounded to nearest once and never contracted into a
// fused multiply-add (the host builds with -ffp-contract=off; CUDA states it per call).
FIXQ_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FIXQ_HOST_DEVICE inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// Scaled / Azp / AzpPerToken (vLLM's ScaledEpilogue family): (float(v) * scale_b) * scale_a,
// v the compensated sum, the conversion rounded to nearest.
FIXQ_HOST_DEVICE inline float dequant_element(int64_t v, float scale_a, float scale_b) {
  return mul_rn(mul_rn(static_cast<float>(v), scale_b), scale_a);
}

// ScaledBias and the biased Azp forms: the same plus bias[n], one more rounding.
FIXQ_HOST_DEVICE inline float dequant_element_bias(int64_t v, float scale_a, float scale_b, float bias) {
  return add_rn(dequant_element(v, scale_a, scale_b), bias);
}

// The fixed-point requantization (docs/spec.md 2.4): sat(scale.apply(v + bias) + zp_out)
// into [clamp.qmin, clamp.qmax], v the compensated sum, bias in accumulator units.
FIXQ_HOST_DEVICE constexpr int32_t requant_element(int64_t v, int32_t bias, const FixedPointScale& scale,
                                                   int32_t zp_out, IntRange clamp) {
  return requantize(v + bias, scale, zp_out, clamp);
}

}  // namespace fixq::gemm_detail
