// Private, for the AVX-512 families' kernel files (*_avx512*.cpp; natively and in the tests'
// SIMDe build, through cpu/x86.h) only: the lane primitives of sixteen 32-bit lanes, with
// the names and contracts of lanes_avx2.h (which states them), a mask register for M.
#pragma once

#include "cpu/x86.h"

#include <cstdint>
#include <type_traits>

namespace fixq::simd {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;  // vector registers the compiler may allocate
  using I = __m512i;
  using F = __m512;
  using M = __mmask16;
  static constexpr bool kByteTables = false;  // (lanes_avx2.h)
  struct ByteTable {};

  // ---- int32 lanes
  static I splat(int32_t v) { return _mm512_set1_epi32(v); }
  static I zero() { return _mm512_setzero_si512(); }
  static I load(const int32_t* p) { return _mm512_loadu_si512(p); }
  static I load_aligned(const int32_t* p) { return _mm512_load_si512(p); }  // 64-byte aligned
  static void store(int32_t* p, I v) { _mm512_storeu_si512(p, v); }
  static I add(I a, I b) { return _mm512_add_epi32(a, b); }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static I min(I a, I b) { return _mm512_min_epi32(a, b); }
  static I max(I a, I b) { return _mm512_max_epi32(a, b); }
  static I max_u(I a, I b) { return _mm512_max_epu32(a, b); }
  static I bit_and(I a, I b) { return _mm512_and_si512(a, b); }
  static I bit_or(I a, I b) { return _mm512_or_si512(a, b); }
  static I bit_xor(I a, I b) { return _mm512_xor_si512(a, b); }
  static I and_or(I a, I b, I c) { return _mm512_ternarylogic_epi32(a, b, c, 0xEA); }  // (a & b) | c, one vpternlogd
  static I sllv(I v, I n) { return _mm512_sllv_epi32(v, n); }
  static I srlv(I v, I n) { return _mm512_srlv_epi32(v, n); }
  static I srav(I v, I n) { return _mm512_srav_epi32(v, n); }
  template <int n> static I slli(I v) { return _mm512_slli_epi32(v, n); }
  template <int n> static I srli(I v) { return _mm512_srli_epi32(v, n); }
  // (vpsravd by a splat: the immediate form is one SIMDe 0.7 lacks.)
  template <int n> static I srai(I v) { return _mm512_srav_epi32(v, _mm512_set1_epi32(n)); }
  static I gather(const int32_t* table, I index) { return _mm512_i32gather_epi32(index, table, 4); }
  // table[index] of int16 entries, sign-extended: 4-byte reads at 2-byte steps (the entry
  // after the last one must be readable), their low halves.
  static I gather_i16(const int16_t* table, I index) {
    return srai<16>(slli<16>(_mm512_i32gather_epi32(index, static_cast<const void*>(table), 2)));
  }

  // ---- masks
  static M gt(I a, I b) { return _mm512_cmpgt_epi32_mask(a, b); }
  static M eq(I a, I b) { return _mm512_cmpeq_epi32_mask(a, b); }
  static I select(M m, I a, I b) { return _mm512_mask_blend_epi32(m, b, a); }
  static M mask_and(M a, M b) { return static_cast<M>(a & b); }
  static M mask_or(M a, M b) { return static_cast<M>(a | b); }
  static M mask_and_not(M a, M b) { return static_cast<M>(a & ~b); }
  static bool any(M m) { return m != 0; }
  static int first(M m) { return m ? __builtin_ctz(static_cast<unsigned>(m)) : -1; }
  static M first_lanes(int64_t n) {
    return n >= kLanes ? static_cast<M>(0xFFFF) : n <= 0 ? static_cast<M>(0) : static_cast<M>((1u << n) - 1u);
  }

  // ---- narrower integers in int32 lanes
  template <class Q>
  static I load_widen_n(const Q* p, int64_t n) {  // masked (lanes_avx2.h: the "_n" forms)
    const M m = first_lanes(n);
    if constexpr (sizeof(Q) == 4) {
      return _mm512_maskz_loadu_epi32(m, p);
    } else if constexpr (sizeof(Q) == 2) {
      const __m256i v = _mm256_maskz_loadu_epi16(m, p);
      return std::is_signed_v<Q> ? _mm512_cvtepi16_epi32(v) : _mm512_cvtepu16_epi32(v);
    } else {
      const __m128i v = _mm_maskz_loadu_epi8(m, p);
      return std::is_signed_v<Q> ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
    }
  }
  template <class Q>
  static I load_widen(const Q* p) {  // the masked load of all lanes runs as fast as a plain one
    return load_widen_n(p, kLanes);
  }
  template <class Q>
  static void store_narrow_n(Q* p, int64_t n, I v) {  // truncation is exact: lanes in Q's range
    const M m = first_lanes(n);
    if constexpr (sizeof(Q) == 4) _mm512_mask_storeu_epi32(p, m, v);
    else if constexpr (sizeof(Q) == 2) _mm512_mask_cvtepi32_storeu_epi16(p, m, v);
    else _mm512_mask_cvtepi32_storeu_epi8(p, m, v);
  }
  template <class Q>
  static void store_narrow(Q* p, I v) {
    store_narrow_n(p, kLanes, v);
  }

  // ---- int64 lanes
  static I splat64(int64_t v) { return _mm512_set1_epi64(v); }
  static I load64(const int64_t* p) { return _mm512_loadu_si512(p); }
  static I add64(I a, I b) { return _mm512_add_epi64(a, b); }
  static I sub64(I a, I b) { return _mm512_sub_epi64(a, b); }
  static I sllv64(I v, I n) { return _mm512_sllv_epi64(v, n); }
  static I srav64(I v, I n) { return _mm512_srav_epi64(v, n); }
  template <int n> static I srli64(I v) { return _mm512_srli_epi64(v, n); }
  static I min64(I a, I b) { return _mm512_min_epi64(a, b); }
  static I max64(I a, I b) { return _mm512_max_epi64(a, b); }
  static I if_zero64(I r, I a, I b) { return _mm512_mask_blend_epi64(_mm512_cmpeq_epi64_mask(r, _mm512_setzero_si512()), b, a); }
  static I mul_even(I a, I b) { return _mm512_mul_epi32(a, b); }
  static I interleave_low(I even, I odd) {
    return _mm512_mask_blend_epi32(static_cast<__mmask16>(0xAAAA), even, _mm512_slli_epi64(odd, 32));
  }
  template <int half>
  static I widen_half(I v) { return _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, half)); }
  static I load_widen_half(const int32_t* p) {
    return _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static I narrow_halves(I lo, I hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(lo)), _mm512_cvtepi64_epi32(hi), 1);
  }
  template <int half>
  static I gather_pairs(const int32_t* table, I k) {
    return _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(k, half), table, 4);
  }

  // ---- float32 lanes
  static F fsplat(float v) { return _mm512_set1_ps(v); }
  static F fzero() { return _mm512_setzero_ps(); }
  static F fload(const float* p) { return _mm512_loadu_ps(p); }
  static F fload_n(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
  static void fstore(float* p, F v) { _mm512_storeu_ps(p, v); }
  static void fstore_n(float* p, int64_t n, F v) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }
  static F fadd(F a, F b) { return _mm512_add_ps(a, b); }
  static F fsub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F fmul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F ffma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fdiv(F a, F b) { return _mm512_div_ps(a, b); }
  static F fmin(F a, F b) { return _mm512_min_ps(a, b); }
  static F fmax(F a, F b) { return _mm512_max_ps(a, b); }
  static F round_even(F v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static I truncate(F v) { return _mm512_cvttps_epi32(v); }
  static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
  static I bits(F v) { return _mm512_castps_si512(v); }
  static F from_bits(I v) { return _mm512_castsi512_ps(v); }
  static M fless(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M fnan(F a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static F fselect(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
  // A hint: the cache line of p into L2 (prefetcht1); never faults.
  static void prefetch_l2(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1); }
  // The kLanes x kLanes block rows[r] lane c, transposed in place: rows[c] lane r. Pairs of
  // rows interleave (vunpck), then quads (vshufps) within the 128-bit quarters; then the
  // quarters move (vshufi32x4, the integer form SIMDe 0.7 provides for the emulated build).
  static void ftranspose(F (&rows)[kLanes]) {
    F t[16];
    for (int i = 0; i < 8; ++i) {  // quarter q: rows 2i, 2i + 1 of columns 4q, 4q + 1 | 4q + 2, 4q + 3
      t[2 * i] = _mm512_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
    }
    F u[16];
    for (int i = 0; i < 4; ++i) {  // u[4i + j], quarter q: rows 4i .. 4i + 3 of column 4q + j
      u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; ++j) {  // column 4q + j: quarter q of u[j], u[4 + j], u[8 + j], u[12 + j]
      const F even_lo = shuffle_quarters<0x88>(u[j], u[4 + j]), odd_lo = shuffle_quarters<0xDD>(u[j], u[4 + j]);
      const F even_hi = shuffle_quarters<0x88>(u[8 + j], u[12 + j]), odd_hi = shuffle_quarters<0xDD>(u[8 + j], u[12 + j]);
      rows[j] = shuffle_quarters<0x88>(even_lo, even_hi);
      rows[4 + j] = shuffle_quarters<0x88>(odd_lo, odd_hi);
      rows[8 + j] = shuffle_quarters<0xDD>(even_lo, even_hi);
      rows[12 + j] = shuffle_quarters<0xDD>(odd_lo, odd_hi);
    }
  }
  // Quarters imm[1:0], imm[3:2] of a and imm[5:4], imm[7:6] of b.
  template <int imm>
  static F shuffle_quarters(F a, F b) {
    return _mm512_castsi512_ps(_mm512_shuffle_i32x4(_mm512_castps_si512(a), _mm512_castps_si512(b), imm));
  }

  // ---- lookups and conversions some kernels share
  // The table's high halves sit in registers, 64 entries per pair, read by vpermt2w: the
  // index in the high half of each int32 lane (the low half zeroed by the mask) returns
  // the whole pattern. Nothing is read past kEntries.
  template <int kEntries>
  static I lookup_hi16(const uint16_t* table, I index) {
    const I idx = _mm512_slli_epi32(index, 16);
    auto lookup64 = [&](int q) {
      const I lo = _mm512_loadu_si512(table + 64 * q), hi = _mm512_loadu_si512(table + 64 * q + 32);
      return _mm512_maskz_permutex2var_epi16(static_cast<__mmask32>(0xAAAAAAAAu), lo, idx, hi);
    };
    if constexpr (kEntries == 64) {
      return lookup64(0);
    } else {
      static_assert(kEntries == 256);
      const M b6 = _mm512_test_epi32_mask(index, splat(64)), b7 = _mm512_test_epi32_mask(index, splat(128));
      const I low = _mm512_mask_blend_epi32(b6, lookup64(0), lookup64(1));
      const I high = _mm512_mask_blend_epi32(b6, lookup64(2), lookup64(3));
      return _mm512_mask_blend_epi32(b7, low, high);
    }
  }
  static F load_halfs(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static F load_halfs_n(const uint16_t* p, int64_t n) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(first_lanes(n), p)); }
  static uint32_t hmax_u(I m) {
    __m256i h = _mm256_max_epu32(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
    h = _mm256_max_epu32(h, _mm256_permute2x128_si256(h, h, 1));
    h = _mm256_max_epu32(h, _mm256_shuffle_epi32(h, 0x4E));
    h = _mm256_max_epu32(h, _mm256_shuffle_epi32(h, 0xB1));
    return static_cast<uint32_t>(_mm256_cvtsi256_si32(h));
  }
};

}  // namespace
}  // namespace fixq::simd
