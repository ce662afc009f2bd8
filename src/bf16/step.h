// Private: one VDPBF16PS lane step in portable C++, from the instruction's pseudo-code in
// Intel's SDM (the definition every bf16 kernel matches; fixq/bf16.h states it):
//     c += make_fp32(a.bf16[1]) * make_fp32(b.bf16[1])
//     c += make_fp32(a.bf16[0]) * make_fp32(b.bf16[0])
// each "+=" an FP32 FMA with DAZ in, FTZ out and round-to-nearest-even, whatever MXCSR says.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace fixq::bf16_detail {

// A subnormal float32 as zero of its sign (DAZ / FTZ; x86 decides tininess after rounding,
// so a rounded result is flushed exactly when it is subnormal).
inline float flush_subnormal(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  return (u & 0x7F800000u) == 0 ? std::bit_cast<float>(u & 0x80000000u) : x;
}

// bf16 bits -> float32, exactly (the upper half of the float32's bits).
inline float widen(uint32_t bf16_bits) { return std::bit_cast<float>(bf16_bits << 16); }

// One lane: the accumulator c after the pair dwords a and b (element 0 in the low half).
inline float dp_step(float c, uint32_t a, uint32_t b) {
  c = flush_subnormal(std::fma(flush_subnormal(widen(a >> 16)), flush_subnormal(widen(b >> 16)), flush_subnormal(c)));
  return flush_subnormal(
      std::fma(flush_subnormal(widen(a & 0xFFFFu)), flush_subnormal(widen(b & 0xFFFFu)), flush_subnormal(c)));
}

}  // namespace fixq::bf16_detail
