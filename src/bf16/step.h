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

// p * q + c rounded once, flushed to a signed zero by x86's tininess rule: tiny when the
// exact result, rounded to 24 bits with an unbounded exponent, is below 2^-126, that is
// when |exact| < 2^-126 - 2^-151. (Flushing only results that are subnormal after rounding
// into float keeps e.g. 2^-126 - 513 * 2^-160, which rounds up to 2^-126 there; the
// hardware returns 0.) p * q is exact in double (two 8-bit significands), and the double
// sum is within 2^-179 of the exact one near the threshold, where exact results lie on a
// grid of 2^-164 or coarser, so it compares with the threshold as the exact sum does.
inline float fma_flush(float p, float q, float c) {
  const float r = std::fma(p, q, c);
  const double x = static_cast<double>(p) * q + c;
  return std::fabs(x) < 0x1.ffffffp-127 ? std::copysign(0.0f, r) : r;
}

// One lane: the accumulator c after the pair dwords a and b (element 0 in the low half).
inline float dp_step(float c, uint32_t a, uint32_t b) {
  c = fma_flush(flush_subnormal(widen(a >> 16)), flush_subnormal(widen(b >> 16)), flush_subnormal(c));
  return fma_flush(flush_subnormal(widen(a & 0xFFFFu)), flush_subnormal(widen(b & 0xFFFFu)), c);
}

}  // namespace fixq::bf16_detail
