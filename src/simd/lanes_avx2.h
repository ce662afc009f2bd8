// Private, for the AVX2 family's kernel files (*_avx2.cpp) only: the lane primitives of
// eight 32-bit lanes.
//
// Every family's lane header (lanes_avx2.h, lanes_avx512.h) defines one struct with the
// same names and the same meaning, lane by lane, as gemmlowp's fixedpoint_avx.h and
// fixedpoint_neon.h specialise one set of names; a kernel body is written once as a
// template over that struct and compiled in each family's file (the family's flags, its own
// copy: everything here has internal linkage). What two families really do differently (a
// mask register against a vector of all-ones lanes, a gather against a table in registers)
// stays inside these headers. tests/simd holds every primitive of every family to the scalar
// statement of its contract (the comments below), lane by lane.
//
// Types: I holds kLanes int32 lanes, or kLanes / 2 int64 lanes for the "64" primitives
// (lane i of those is int32 lanes 2i and 2i + 1); F holds kLanes float32 lanes; M is a lane
// mask (here a vector whose selected int32 lanes are all ones).
#pragma once

#include "cpu/x86.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fixq::simd {
namespace {

struct Avx2 {
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;  // vector registers the compiler may allocate
  using I = __m256i;
  using F = __m256;
  using M = __m256i;
  // No activation tables in registers (lanes_avx512vbmi.h has them): gathers read them.
  static constexpr bool kByteTables = false;
  struct ByteTable {};

  // ---- int32 lanes
  static I splat(int32_t v) { return _mm256_set1_epi32(v); }
  static I zero() { return _mm256_setzero_si256(); }
  static I load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const I*>(p)); }
  static I load_aligned(const int32_t* p) { return _mm256_load_si256(reinterpret_cast<const I*>(p)); }  // 32-byte aligned
  static void store(int32_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<I*>(p), v); }
  static I add(I a, I b) { return _mm256_add_epi32(a, b); }            // wraps (callers prove no overflow)
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }        // low 32 bits of a * b
  static I min(I a, I b) { return _mm256_min_epi32(a, b); }
  static I max(I a, I b) { return _mm256_max_epi32(a, b); }
  static I max_u(I a, I b) { return _mm256_max_epu32(a, b); }          // unsigned
  static I bit_and(I a, I b) { return _mm256_and_si256(a, b); }
  static I bit_or(I a, I b) { return _mm256_or_si256(a, b); }
  static I bit_xor(I a, I b) { return _mm256_xor_si256(a, b); }
  static I and_or(I a, I b, I c) { return _mm256_or_si256(_mm256_and_si256(a, b), c); }  // (a & b) | c
  static I sllv(I v, I n) { return _mm256_sllv_epi32(v, n); }          // n in [0, 31]; 32 and more give 0
  static I srlv(I v, I n) { return _mm256_srlv_epi32(v, n); }          // logical; 32 and more give 0
  static I srav(I v, I n) { return _mm256_srav_epi32(v, n); }          // arithmetic; 32 and more give the sign
  template <int n> static I slli(I v) { return _mm256_slli_epi32(v, n); }
  template <int n> static I srli(I v) { return _mm256_srli_epi32(v, n); }
  template <int n> static I srai(I v) { return _mm256_srai_epi32(v, n); }
  static I gather(const int32_t* table, I index) { return _mm256_i32gather_epi32(table, index, 4); }
  // table[index] of int16 entries, sign-extended: 4-byte reads at 2-byte steps (the entry
  // after the last one must be readable), their low halves.
  static I gather_i16(const int16_t* table, I index) {
    return srai<16>(slli<16>(_mm256_i32gather_epi32(reinterpret_cast<const int*>(table), index, 2)));
  }

  // ---- masks
  static M gt(I a, I b) { return _mm256_cmpgt_epi32(a, b); }           // signed a > b
  static M eq(I a, I b) { return _mm256_cmpeq_epi32(a, b); }
  static I select(M m, I a, I b) { return _mm256_blendv_epi8(b, a, m); }  // m ? a : b
  static M mask_and(M a, M b) { return _mm256_and_si256(a, b); }
  static M mask_or(M a, M b) { return _mm256_or_si256(a, b); }
  static M mask_and_not(M a, M b) { return _mm256_andnot_si256(b, a); }  // a and not b
  static bool any(M m) { return !_mm256_testz_si256(m, m); }
  static int first(M m) {  // the lowest selected lane, -1 for none
    const int bits = _mm256_movemask_ps(_mm256_castsi256_ps(m));
    return bits ? __builtin_ctz(static_cast<unsigned>(bits)) : -1;
  }
  static M first_lanes(int64_t n) {  // lanes i < n (none for n <= 0, all for n >= kLanes)
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(n < 0 ? 0 : n > kLanes ? kLanes : n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }

  // ---- narrower integers in int32 lanes: Q is int8_t, uint8_t, int16_t, uint16_t or int32_t
  template <class Q>
  static I load_widen(const Q* p) {  // kLanes elements, sign- or zero-extended
    if constexpr (sizeof(Q) == 4) {
      return _mm256_loadu_si256(reinterpret_cast<const I*>(p));
    } else if constexpr (sizeof(Q) == 2) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return std::is_signed_v<Q> ? _mm256_cvtepi16_epi32(v) : _mm256_cvtepu16_epi32(v);
    } else {
      const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
    }
  }
  // The "_n" forms take the first n elements (all for n >= kLanes; the other lanes 0) and
  // read or write nothing past them.
  template <class Q>
  static I load_widen_n(const Q* p, int64_t n) {
    if (n >= kLanes) return load_widen(p);
    alignas(32) Q buf[kLanes] = {};
    if (n > 0) std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(Q));
    return load_widen(buf);
  }
  template <class Q>
  static void store_narrow(Q* p, I v) {  // every lane already in Q's range: the packs are exact
    if constexpr (sizeof(Q) == 4) {
      _mm256_storeu_si256(reinterpret_cast<I*>(p), v);
    } else {
      // Packs work per 128-bit half: the low 8 (16) bytes of each half hold lanes 0-3, 4-7.
      const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
      const __m128i w = std::is_signed_v<Q> ? _mm_packs_epi32(lo, hi) : _mm_packus_epi32(lo, hi);
      if constexpr (sizeof(Q) == 2) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
      } else {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(p), std::is_signed_v<Q> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
      }
    }
  }
  template <class Q>
  static void store_narrow_n(Q* p, int64_t n, I v) {
    if (n >= kLanes) return store_narrow(p, v);
    if (n <= 0) return;
    alignas(32) Q buf[kLanes];
    store_narrow(buf, v);
    std::memcpy(p, buf, static_cast<size_t>(n) * sizeof(Q));
  }

  // ---- int64 lanes
  static I splat64(int64_t v) { return _mm256_set1_epi64x(v); }
  static I load64(const int64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const I*>(p)); }
  static I add64(I a, I b) { return _mm256_add_epi64(a, b); }
  static I sub64(I a, I b) { return _mm256_sub_epi64(a, b); }
  static I sllv64(I v, I n) { return _mm256_sllv_epi64(v, n); }  // n in [0, 63]
  // Arithmetic, n in [0, 63] (AVX2 has only the logical shift): floor(v / 2^n) is
  // ~(~v >>> n) for negative v.
  static I srav64(I v, I n) {
    const I sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
    return _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(v, sign), n), sign);
  }
  template <int n> static I srli64(I v) { return _mm256_srli_epi64(v, n); }
  static I min64(I a, I b) { return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b)); }
  static I max64(I a, I b) { return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a)); }
  static I if_zero64(I r, I a, I b) { return _mm256_blendv_epi8(b, a, _mm256_cmpeq_epi64(r, _mm256_setzero_si256())); }
  // The int64 products of int32 lanes 2i (the low halves of the int64 lanes).
  static I mul_even(I a, I b) { return _mm256_mul_epi32(a, b); }
  // Int32 lanes from the low halves of two int64 vectors' lanes: lane 2i from even's lane
  // i, lane 2i + 1 from odd's.
  static I interleave_low(I even, I odd) { return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA); }
  // Int32 lanes 0 .. kLanes/2 - 1 (half 0) or kLanes/2 .. (half 1) as int64 lanes, signed.
  template <int half>
  static I widen_half(I v) { return _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, half)); }
  static I load_widen_half(const int32_t* p) {  // kLanes / 2 int32 as int64 lanes, signed
    return _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // The low 32 bits of every int64 lane, those of lo then those of hi, as kLanes int32 lanes.
  static I narrow_halves(I lo, I hi) {
    const I idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    return _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(lo, idx), _mm256_permutevar8x32_epi32(hi, idx), 0x20);
  }
  // table[k] | table[k + 1] << 32 for the int32 indices k of lanes of one half of v (half 0:
  // lanes 0 .. kLanes/2 - 1), as int64 lanes: a pair of neighbouring entries per lane.
  template <int half>
  static I gather_pairs(const int32_t* table, I k) {
    return _mm256_i32gather_epi64(reinterpret_cast<const long long*>(table), _mm256_extracti128_si256(k, half), 4);
  }

  // ---- float32 lanes
  static F fsplat(float v) { return _mm256_set1_ps(v); }
  static F fzero() { return _mm256_setzero_ps(); }
  static F fload(const float* p) { return _mm256_loadu_ps(p); }
  static F fload_n(const float* p, int64_t n) {  // the other lanes +0
    return n >= kLanes ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, first_lanes(n));
  }
  static void fstore(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void fstore_n(float* p, int64_t n, F v) {
    if (n >= kLanes) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, first_lanes(n), v);
  }
  static F fadd(F a, F b) { return _mm256_add_ps(a, b); }  // each operation rounded once, to nearest
  static F fsub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F fmul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F ffma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }  // a * b + c, rounded once (fused)
  static F fdiv(F a, F b) { return _mm256_div_ps(a, b); }
  static F fmin(F a, F b) { return _mm256_min_ps(a, b); }  // x86 minps: b when either is NaN
  static F fmax(F a, F b) { return _mm256_max_ps(a, b); }
  static F round_even(F v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static I truncate(F v) { return _mm256_cvttps_epi32(v); }  // out of range: INT32_MIN
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }   // rounded to nearest
  static I bits(F v) { return _mm256_castps_si256(v); }
  static F from_bits(I v) { return _mm256_castsi256_ps(v); }
  static M fless(F a, F b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
  static M fnan(F a) { return _mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }
  static F fselect(M m, F a, F b) { return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m)); }
  // A hint: the cache line of p into L2 (prefetcht1); never faults.
  static void prefetch_l2(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1); }
  // The kLanes x kLanes block rows[r] lane c, transposed in place: rows[c] lane r. Pairs of
  // rows interleave (vunpck), then quads (vshufps) within the 128-bit halves; then the halves
  // move (vperm2f128).
  static void ftranspose(F (&rows)[kLanes]) {
    F t[8], u[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {  // u[4i + j], half q: rows 4i .. 4i + 3 of column 4q + j
      u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; ++j) {
      rows[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
      rows[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
  }

  // ---- lookups and conversions some kernels share
  // table[index] << 16 for indices below kEntries (64 or 256), every lane: the float32 whose
  // high half the table holds. The table has 257 entries (a gather here reads index + 1 too,
  // as the high half of its 4 bytes); an index of kEntries or more gives an unspecified
  // value but never reads outside the table.
  template <int kEntries>
  static I lookup_hi16(const uint16_t* table, I index) {
    return _mm256_slli_epi32(_mm256_i32gather_epi32(reinterpret_cast<const int*>(table), index, 2), 16);
  }
  // kLanes IEEE half-precision patterns, converted to float32 exactly (vcvtph2ps: a
  // signalling NaN comes back quiet, its payload kept).
  static F load_halfs(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static F load_halfs_n(const uint16_t* p, int64_t n) {
    if (n >= kLanes) return load_halfs(p);
    alignas(16) uint16_t buf[kLanes] = {};
    if (n > 0) std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(uint16_t));
    return load_halfs(buf);
  }
  // The largest lane, unsigned.
  static uint32_t hmax_u(I m) {
    m = _mm256_max_epu32(m, _mm256_permute2x128_si256(m, m, 1));
    m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0x4E));
    m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0xB1));
    return static_cast<uint32_t>(_mm256_cvtsi256_si32(m));
  }
};

}  // namespace
}  // namespace fixq::simd
