// Private, for *_avx2.cpp files only: the lane forms of arith/lane_scale.h on eight int32
// lanes, operation for operation as their scalar definitions there.
#pragma once

#include "arith/lane_scale.h"
#include "cpu/x86.h"

namespace fixq::avx2_lanes {

using V = __m256i;

static inline V splat(int32_t v) { return _mm256_set1_epi32(v); }

// A LaneScale in registers, per lane (per-row scales) or the same in every lane.
struct LaneScaleRegs {
  V m, left, right, right_m1, bit;  // right_m1 = max(right - 1, 0); bit = right > 0
  V right_even, right_odd;          // right as 64-bit lanes
  bool add_then_shift = false;
  V half;                           // 2^(right - 1) for add_then_shift scales
};

static inline LaneScaleRegs lane_scale_regs(V m, V left, V right) {
  LaneScaleRegs s;
  s.m = m;
  s.left = left;
  s.right = right;
  s.right_m1 = _mm256_max_epi32(_mm256_sub_epi32(right, splat(1)), _mm256_setzero_si256());
  s.bit = _mm256_min_epi32(right, splat(1));
  s.right_even = _mm256_and_si256(right, _mm256_set1_epi64x(0xffffffff));
  s.right_odd = _mm256_srli_epi64(right, 32);
  s.half = _mm256_setzero_si256();
  return s;
}

static inline LaneScaleRegs lane_scale_regs(const LaneScale& l) {
  LaneScaleRegs s = lane_scale_regs(splat(l.m), splat(l.left), splat(l.right));
  s.add_then_shift = l.add_then_shift;
  s.half = splat(l.add_then_shift && l.right > 0 ? int32_t{1} << (l.right - 1) : 0);
  return s;
}

// Arithmetic right shift of 64-bit lanes by counts in [0, 63] (AVX2 has only the logical
// one): floor(q / 2^s) = ~(~q >>> s) for negative q.
static inline V sra64(V q, V s) {
  const V sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), q);
  return _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(q, sign), s), sign);
}

// lane_rounding_shift64 per 64-bit lane, s in [1, 62].
static inline V rounding_shift64(V q, V s) {
  const V half = _mm256_sllv_epi64(_mm256_set1_epi64x(1), _mm256_sub_epi64(s, _mm256_set1_epi64x(1)));
  return sra64(_mm256_add_epi64(q, half), s);
}

// Low 32 bits of the 64-bit lanes of even (lanes 0, 2, 4, 6) and odd results, back into
// eight int32 lanes.
static inline V interleave_low(V even, V odd) { return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA); }

static inline V apply_pow2(V x, const LaneScaleRegs& s) {
  if (s.add_then_shift) return _mm256_srav_epi32(_mm256_add_epi32(x, s.half), s.right);
  x = _mm256_sllv_epi32(x, s.left);
  const V q = _mm256_srav_epi32(x, s.right);
  return _mm256_add_epi32(q, _mm256_and_si256(_mm256_srav_epi32(x, s.right_m1), s.bit));
}

static inline V apply_multiplier(V x, const LaneScaleRegs& s) {
  const V even = _mm256_mul_epi32(x, s.m);
  const V odd = _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(s.m, 32));
  return interleave_low(rounding_shift64(even, s.right_even), rounding_shift64(odd, s.right_odd));
}

static inline V apply_wide_pow2(V a, V b, const LaneScaleRegs& s) {
  auto part = [&](V pa, V pb) {
    const V p = _mm256_sllv_epi64(_mm256_mul_epi32(pa, pb), _mm256_and_si256(s.left, _mm256_set1_epi64x(0xffffffff)));
    const V r = s.right_even;
    const V rounded = rounding_shift64(p, _mm256_max_epi32(r, _mm256_set1_epi64x(1)));
    return _mm256_blendv_epi8(rounded, p, _mm256_cmpeq_epi64(r, _mm256_setzero_si256()));
  };
  return interleave_low(part(a, b), part(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)));
}

static inline V apply_wide_multiplier(V a, V b, const LaneScaleRegs& s) {
  const V eight = _mm256_set1_epi64x(8);
  auto part = [&](V pa, V pb, V r) {
    const V p = _mm256_mul_epi32(pa, pb);
    const V hi = sra64(p, eight), lo = _mm256_and_si256(p, _mm256_set1_epi64x(0xff));
    const V half = _mm256_sllv_epi64(_mm256_set1_epi64x(1), _mm256_sub_epi64(r, _mm256_set1_epi64x(1)));
    const V low_part = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(lo, s.m), half), 8);
    return sra64(_mm256_add_epi64(_mm256_mul_epi32(hi, s.m), low_part), _mm256_sub_epi64(r, eight));
  };
  return interleave_low(part(a, b, s.right_even), part(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32), s.right_odd));
}

}  // namespace fixq::avx2_lanes
