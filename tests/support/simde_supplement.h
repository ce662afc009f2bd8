// Private, tests only (tests/support/simde_x86.h): the AVX-512 names the kernels
// use that SIMDe 0.7 (Debian 12's libsimde-dev) does not provide, or provides with other
// results than the instruction's, written in portable C++ from the operation sections of
// Intel's intrinsics guide (the SDM's pseudo-code). Masked
// loads read, and masked stores write, only the lanes of their mask, as the instructions'
// fault suppression guarantees. tests/cpu/supplement_test.cpp runs every one through the
// emulated build of tests/cpu/supplement_avx512*.cpp, compares it bit for bit with the
// hardware instruction where the CPU has it, and with a scalar statement of the pseudo-code.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

typedef simde__mmask8 __mmask8;
typedef simde__mmask16 __mmask16;
typedef simde__mmask32 __mmask32;
typedef simde__mmask64 __mmask64;
#ifndef _MM_FROUND_NO_EXC
#define _MM_FROUND_NO_EXC SIMDE_MM_FROUND_NO_EXC
#endif

namespace fixq::emulated {

// A vector as an array of N lanes of T, and back.
template <class T, int N>
struct Lanes {
  T v[N];
};

template <class T, int N, class V>
Lanes<T, N> lanes(const V& a) {
  static_assert(sizeof(Lanes<T, N>) == sizeof(V));
  Lanes<T, N> l;
  std::memcpy(l.v, &a, sizeof a);
  return l;
}

template <class V, class T, int N>
V vec(const Lanes<T, N>& l) {
  static_assert(sizeof(Lanes<T, N>) == sizeof(V));
  V a;
  std::memcpy(&a, l.v, sizeof a);
  return a;
}

// Masked load of N lanes of T: lanes outside k are taken from src; their memory is not read.
template <class V, class T, int N>
V mask_loadu(const V& src, uint64_t k, const void* p) {
  Lanes<T, N> l = lanes<T, N>(src);
  for (int i = 0; i < N; ++i)
    if ((k >> i) & 1) std::memcpy(&l.v[i], static_cast<const char*>(p) + sizeof(T) * i, sizeof(T));
  return vec<V>(l);
}

template <class V, class T, int N>
void mask_storeu(void* p, uint64_t k, const V& a) {
  const Lanes<T, N> l = lanes<T, N>(a);
  for (int i = 0; i < N; ++i)
    if ((k >> i) & 1) std::memcpy(static_cast<char*>(p) + sizeof(T) * i, &l.v[i], sizeof(T));
}

// VCVTDQ2PS: int32 -> float32 rounded by MXCSR (round to nearest even by default, as C++).
inline simde__m512 cvtepi32_ps(simde__m512i a) {
  const auto x = lanes<int32_t, 16>(a);
  Lanes<float, 16> r;
  for (int i = 0; i < 16; ++i) r.v[i] = static_cast<float>(x.v[i]);
  return vec<simde__m512>(r);
}

// VCVTTPS2DQ: float32 -> int32 toward zero; NaN and out-of-range give 0x80000000.
inline simde__m512i cvttps_epi32(simde__m512 a) {
  const auto x = lanes<float, 16>(a);
  Lanes<int32_t, 16> r;
  for (int i = 0; i < 16; ++i) {
    const float f = x.v[i];
    r.v[i] = (std::isnan(f) || f >= 2147483648.0f || f < -2147483648.0f) ? INT32_MIN : static_cast<int32_t>(f);
  }
  return vec<simde__m512i>(r);
}

// VPMOVSXBD / VPMOVZXBD / VPMOVSXWD / VPMOVZXWD: 16 narrow lanes widened to int32.
template <class T, class V>
simde__m512i widen_epi32(const V& a) {
  const auto x = lanes<T, sizeof(V) / sizeof(T)>(a);
  Lanes<int32_t, 16> r;
  for (int i = 0; i < 16; ++i) r.v[i] = x.v[i];
  return vec<simde__m512i>(r);
}

// VPMOVDB / VPMOVDW m, zmm {k}: int32 lanes truncated to T, lanes in k stored.
template <class T>
void mask_cvtepi32_storeu(void* p, uint64_t k, simde__m512i a) {
  const auto x = lanes<int32_t, 16>(a);
  for (int i = 0; i < 16; ++i)
    if ((k >> i) & 1) {
      const T t = static_cast<T>(x.v[i]);
      std::memcpy(static_cast<char*>(p) + sizeof(T) * i, &t, sizeof t);
    }
}

// VPCMPD with a predicate: one mask bit per lane.
template <class P>
simde__mmask16 cmp_epi32_mask(simde__m512i a, simde__m512i b, P pred) {
  const auto x = lanes<int32_t, 16>(a), y = lanes<int32_t, 16>(b);
  simde__mmask16 m = 0;
  for (int i = 0; i < 16; ++i)
    if (pred(x.v[i], y.v[i])) m = static_cast<simde__mmask16>(m | (1u << i));
  return m;
}

// VPSRAVD / VPSRAVQ: arithmetic right shift per lane; counts >= the lane width give the
// sign fill.
template <class T, int N>
simde__m512i srav(simde__m512i a, simde__m512i count) {
  const auto x = lanes<T, N>(a), c = lanes<T, N>(count);
  Lanes<T, N> r;
  constexpr int bits = 8 * sizeof(T);
  for (int i = 0; i < N; ++i) {
    const auto n = static_cast<std::make_unsigned_t<T>>(c.v[i]);
    r.v[i] = n >= bits ? (x.v[i] < 0 ? T(-1) : T(0)) : static_cast<T>(x.v[i] >> n);
  }
  return vec<simde__m512i>(r);
}

// VPSRAQ zmm, imm: arithmetic right shift of 64-bit lanes (counts >= 64: sign fill).
inline simde__m512i srai_epi64(simde__m512i a, unsigned n) {
  const auto x = lanes<int64_t, 8>(a);
  Lanes<int64_t, 8> r;
  for (int i = 0; i < 8; ++i) r.v[i] = n >= 64 ? (x.v[i] < 0 ? -1 : 0) : x.v[i] >> n;
  return vec<simde__m512i>(r);
}

// VPGATHERDD / VPGATHERDQ zmm, [base + index * scale]: one load of T per int32 index of
// the vector Index (16 int32 or 8 int64 elements).
template <class T, class Index>
inline simde__m512i i32gather(Index index, const void* base, int scale) {
  constexpr int kN = 64 / sizeof(T);
  const auto idx = lanes<int32_t, kN>(index);
  Lanes<T, kN> r;
  for (int i = 0; i < kN; ++i)
    std::memcpy(&r.v[i], static_cast<const char*>(base) + int64_t{idx.v[i]} * scale, sizeof(T));
  return vec<simde__m512i>(r);
}

// VPMOVSXDQ: 8 int32 -> 8 int64.
inline simde__m512i cvtepi32_epi64(simde__m256i a) {
  const auto x = lanes<int32_t, 8>(a);
  Lanes<int64_t, 8> r;
  for (int i = 0; i < 8; ++i) r.v[i] = x.v[i];
  return vec<simde__m512i>(r);
}

// VPMOVDW / VPMOVDB: 16 int32 truncated to int16 / int8.
template <class T, class R>
R truncate_epi32(simde__m512i a) {
  const auto x = lanes<int32_t, 16>(a);
  Lanes<T, 16> r;
  for (int i = 0; i < 16; ++i) r.v[i] = static_cast<T>(x.v[i]);
  return vec<R>(r);
}


// VPSRLW / VPSRLD zmm {k}, zmm, imm: logical right shift of the lanes in k (counts >= the
// lane width give 0), the other lanes from src.
template <class T, int N>
simde__m512i mask_srli(simde__m512i src, uint64_t k, simde__m512i a, unsigned n) {
  auto r = lanes<T, N>(src);
  const auto x = lanes<T, N>(a);
  for (int i = 0; i < N; ++i)
    if ((k >> i) & 1) r.v[i] = n >= 8 * sizeof(T) ? T(0) : static_cast<T>(x.v[i] >> n);
  return vec<simde__m512i>(r);
}

// VPMOVZXBW zmm, ymm: 32 bytes zero-extended to 16 bits.
inline simde__m512i cvtepu8_epi16(simde__m256i a) {
  const auto x = lanes<uint8_t, 32>(a);
  Lanes<uint16_t, 32> r;
  for (int i = 0; i < 32; ++i) r.v[i] = x.v[i];
  return vec<simde__m512i>(r);
}

// VPMULHUW: the high 16 bits of the unsigned 32-bit products.
inline simde__m512i mulhi_epu16(simde__m512i a, simde__m512i b) {
  const auto x = lanes<uint16_t, 32>(a), y = lanes<uint16_t, 32>(b);
  Lanes<uint16_t, 32> r;
  for (int i = 0; i < 32; ++i) r.v[i] = static_cast<uint16_t>((uint32_t{x.v[i]} * y.v[i]) >> 16);
  return vec<simde__m512i>(r);
}

// The zero-extending casts (the upper lanes are 0, unlike _mm512_castsi*_si512's).
template <class V>
simde__m512i zext_si512(const V& a) {
  Lanes<uint8_t, 64> r{};
  std::memcpy(r.v, &a, sizeof a);
  return vec<simde__m512i>(r);
}

// VPMADDWD zmm: per int32 lane, a.i16[2i] * b.i16[2i] + a.i16[2i+1] * b.i16[2i+1], each
// product exact in int32 and the sum wrapping: only (-2^15)(-2^15) + (-2^15)(-2^15) = 2^31
// leaves int32, and becomes -2^31. SIMDe 0.7's simde_mm512_madd_epi16 adds in int, which
// is undefined behaviour there.
inline simde__m512i madd_epi16(simde__m512i a, simde__m512i b) {
  const auto x = lanes<int16_t, 32>(a), y = lanes<int16_t, 32>(b);
  Lanes<uint32_t, 16> r;
  for (int i = 0; i < 16; ++i)
    r.v[i] = static_cast<uint32_t>(int32_t{x.v[2 * i]} * y.v[2 * i]) +
             static_cast<uint32_t>(int32_t{x.v[2 * i + 1]} * y.v[2 * i + 1]);
  return vec<simde__m512i>(r);
}

// VCVTPH2PS: IEEE binary16 -> binary32, exact; a NaN comes back quiet (bit 22 set) with
// its payload, as the instruction does.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  uint32_t bits;
  if (e == 0x1F) {
    bits = sign | 0x7F800000u | (m << 13) | (m != 0 ? 0x400000u : 0u);
  } else if (e != 0) {
    bits = sign | ((e + 112) << 23) | (m << 13);
  } else {
    const float v = static_cast<float>(m) * 0x1p-24f;  // exact
    std::memcpy(&bits, &v, sizeof bits);
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <class R, int N, class V>
R cvtph_ps(const V& a) {
  const auto x = lanes<uint16_t, sizeof(V) / 2>(a);
  Lanes<float, N> r;
  for (int i = 0; i < N; ++i) r.v[i] = half_to_float(x.v[i]);
  return vec<R>(r);
}

// VDPBF16PS zmm: per float32 lane, c += a.bf16[1] * b.bf16[1], then c += a.bf16[0] *
// b.bf16[0], each an FMA with DAZ in, FTZ out and round-to-nearest-even (MXCSR ignored).
// x86 decides tininess after rounding with an unbounded exponent: an exact result below
// 2^-126 - 2^-151 (which rounds, at 24 bits, below 2^-126) is flushed, even where the
// subnormal format would round it up to 2^-126 itself.
inline float daz(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7F800000u) == 0) u &= 0x80000000u;
  std::memcpy(&x, &u, 4);
  return x;
}
inline float fma_ftz(float p, float q, float c) {
  const float r = std::fma(p, q, c);
  // p * q is exact in double (two 8-bit significands); the double sum, within 2^-179 of
  // the exact one near 2^-126, where exact results lie on a grid of 2^-164 or coarser,
  // compares with the threshold as the exact sum does.
  const double x = static_cast<double>(p) * q + c;
  return std::fabs(x) < 0x1.ffffffp-127 ? std::copysign(0.0f, r) : r;
}
inline float bf16_bits_to_float(uint32_t h) {
  const uint32_t u = h << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
template <class BH>
simde__m512 dpbf16_ps(simde__m512 src, const BH& a, const BH& b) {
  auto c = lanes<float, 16>(src);
  const auto x = lanes<uint32_t, 16>(a), y = lanes<uint32_t, 16>(b);
  for (int i = 0; i < 16; ++i) {
    for (int half = 1; half >= 0; --half) {
      const float p = daz(bf16_bits_to_float((x.v[i] >> (16 * half)) & 0xFFFFu));
      const float q = daz(bf16_bits_to_float((y.v[i] >> (16 * half)) & 0xFFFFu));
      c.v[i] = fma_ftz(p, q, daz(c.v[i]));
    }
  }
  return vec<simde__m512>(c);
}

// VFMADD*PS zmm: a * b + c per lane, rounded once ("fused", the SDM's RoundFPControl of
// the infinitely precise result). SIMDe 0.7's simde_mm512_fmadd_ps computes (a * b) + c,
// two roundings, wherever the build has no FMA instruction and libm's fmaf is not known to
// be fast (no FP_FAST_FMAF), which is the case of the tests' SIMDe build (no -m flags):
// std::fma is IEEE's fusedMultiplyAdd, exact in hardware or in libm's software.
inline simde__m512 fmadd_ps(simde__m512 a, simde__m512 b, simde__m512 c) {
  const auto x = lanes<float, 16>(a), y = lanes<float, 16>(b), z = lanes<float, 16>(c);
  Lanes<float, 16> r;
  for (int i = 0; i < 16; ++i) r.v[i] = std::fma(x.v[i], y.v[i], z.v[i]);
  return vec<simde__m512>(r);
}

}  // namespace fixq::emulated

#define _mm512_maskz_loadu_epi32(k, p) \
  (fixq::emulated::mask_loadu<simde__m512i, int32_t, 16>(simde_mm512_setzero_si512(), (k), (p)))
#define _mm512_maskz_loadu_epi8(k, p) \
  (fixq::emulated::mask_loadu<simde__m512i, int8_t, 64>(simde_mm512_setzero_si512(), (k), (p)))
#define _mm512_maskz_loadu_epi16(k, p) \
  (fixq::emulated::mask_loadu<simde__m512i, int16_t, 32>(simde_mm512_setzero_si512(), (k), (p)))
#define _mm512_mask_storeu_epi32(p, k, a) (fixq::emulated::mask_storeu<simde__m512i, int32_t, 16>((p), (k), (a)))
#define _mm512_maskz_loadu_ps(k, p) (fixq::emulated::mask_loadu<simde__m512, float, 16>(simde_mm512_setzero_ps(), (k), (p)))
#define _mm512_mask_loadu_ps(src, k, p) (fixq::emulated::mask_loadu<simde__m512, float, 16>((src), (k), (p)))
#define _mm512_mask_storeu_ps(p, k, a) (fixq::emulated::mask_storeu<simde__m512, float, 16>((p), (k), (a)))
#define _mm_maskz_loadu_epi8(k, p) (fixq::emulated::mask_loadu<simde__m128i, int8_t, 16>(simde_mm_setzero_si128(), (k), (p)))
#define _mm256_maskz_loadu_epi16(k, p) \
  (fixq::emulated::mask_loadu<simde__m256i, int16_t, 16>(simde_mm256_setzero_si256(), (k), (p)))
#define _mm512_cvtepi32_ps(a) (fixq::emulated::cvtepi32_ps(a))
#define _mm512_cvttps_epi32(a) (fixq::emulated::cvttps_epi32(a))
#define _mm512_cvtepi8_epi32(a) (fixq::emulated::widen_epi32<int8_t>(a))
#define _mm512_cvtepu8_epi32(a) (fixq::emulated::widen_epi32<uint8_t>(a))
#define _mm512_cvtepi16_epi32(a) (fixq::emulated::widen_epi32<int16_t>(a))
#define _mm512_cvtepu16_epi32(a) (fixq::emulated::widen_epi32<uint16_t>(a))
#define _mm512_mask_cvtepi32_storeu_epi8(p, k, a) (fixq::emulated::mask_cvtepi32_storeu<int8_t>((p), (k), (a)))
#define _mm512_mask_cvtepi32_storeu_epi16(p, k, a) (fixq::emulated::mask_cvtepi32_storeu<int16_t>((p), (k), (a)))
#define _mm512_cmplt_epi32_mask(a, b) \
  (fixq::emulated::cmp_epi32_mask((a), (b), [](int32_t x, int32_t y) { return x < y; }))
#define _mm512_srav_epi32(a, c) (fixq::emulated::srav<int32_t, 16>((a), (c)))
#define _mm512_srav_epi64(a, c) (fixq::emulated::srav<int64_t, 8>((a), (c)))
#define _mm512_srai_epi64(a, n) (fixq::emulated::srai_epi64((a), (n)))
#define _mm512_i32gather_epi32(i, base, scale) (fixq::emulated::i32gather<int32_t>((i), (base), (scale)))
#define _mm512_i32gather_epi64(i, base, scale) (fixq::emulated::i32gather<int64_t>((i), (base), (scale)))
#define _mm512_cvtepi32_epi64(a) (fixq::emulated::cvtepi32_epi64(a))
#define _mm512_cvtepi32_epi16(a) (fixq::emulated::truncate_epi32<int16_t, simde__m256i>(a))
#define _mm512_cvtepi32_epi8(a) (fixq::emulated::truncate_epi32<int8_t, simde__m128i>(a))
#define _mm512_mask_srli_epi16(src, k, a, n) (fixq::emulated::mask_srli<uint16_t, 32>((src), (k), (a), (n)))
#define _mm512_mask_srli_epi32(src, k, a, n) (fixq::emulated::mask_srli<uint32_t, 16>((src), (k), (a), (n)))
#define _mm512_cvtepu8_epi16(a) (fixq::emulated::cvtepu8_epi16(a))
#define _mm512_mulhi_epu16(a, b) (fixq::emulated::mulhi_epu16((a), (b)))
#define _mm512_zextsi128_si512(a) (fixq::emulated::zext_si512(a))
#define _mm512_zextsi256_si512(a) (fixq::emulated::zext_si512(a))
#undef _mm_cvtph_ps
#define _mm_cvtph_ps(a) (fixq::emulated::cvtph_ps<simde__m128, 4>(a))
#define _mm512_cvtph_ps(a) (fixq::emulated::cvtph_ps<simde__m512, 16>(a))
#define _mm512_cmpneq_epi32_mask(a, b) \
  (fixq::emulated::cmp_epi32_mask((a), (b), [](int32_t x, int32_t y) { return x != y; }))
// SIMDe 0.7's alias of _mm512_madd_epi16 (avx512/madd.h) takes the four arguments of the
// masked form, so VPMADDWD zmm could not be written under its own name.
#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) (fixq::emulated::madd_epi16((a), (b)))
#undef _mm512_dpbf16_ps
#define _mm512_dpbf16_ps(src, a, b) (fixq::emulated::dpbf16_ps((src), (a), (b)))
#undef _mm512_fmadd_ps
#define _mm512_fmadd_ps(a, b, c) (fixq::emulated::fmadd_ps((a), (b), (c)))
