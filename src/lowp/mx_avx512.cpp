// AVX-512 OCP MX kernels: one 32-element block per step, two 16-lane vectors, the element
// encoding and decoding of vec_avx512.h, and the 4- and 6-bit packing by byte shuffles
// (no BMI2, so that the tests' SIMDe build runs the same code). NaN and infinity blocks go
// through the scalar block definition, as in the AVX2 kernels.
#include <cstdint>
#include <utility>

#include "lowp/kernels.h"
#include "lowp/mx_block.h"
#include "lowp/vec_avx512.h"

namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

uint32_t horizontal_max_u32(__m512i m) {
  __m256i h = _mm256_max_epu32(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
  h = _mm256_max_epu32(h, _mm256_permute2x128_si256(h, h, 1));
  h = _mm256_max_epu32(h, _mm256_shuffle_epi32(h, 0x4E));
  h = _mm256_max_epu32(h, _mm256_shuffle_epi32(h, 0xB1));
  return static_cast<uint32_t>(_mm256_cvtsi256_si32(h));
}

// MXINT8's element on 16 lanes: round half even (explicit immediate), clamp, convert.
__m512i int8_codes(__m512 t) {
  const __m512 r =
      _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(64.0f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(r, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f)));
}

// vpshufb controls (constant arrays, not vector globals: nothing of this file may run
// before the CPU check). Per 128-bit lane: the low three bytes of each dword packed into
// the lane's low 12 bytes; and back, twelve bytes spread over four dwords.
alignas(32) constexpr int8_t kDrop4th[32] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                             0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1};
alignas(32) constexpr int8_t kAdd4th[32] = {0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
                                            0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1};

__m256i control(const int8_t (&c)[32]) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(c)); }

__m256i splat8(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

// 32 codes (int32 lanes of c0, c1, each < 2^Bits; MXINT8's two's complement bytes) -> the
// block's element bytes (Bits * 4 bytes, nothing written beyond them).
template <int Bits>
void store_elements(__m512i c0, __m512i c1, uint8_t* out) {
  const __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(c0)), _mm512_cvtepi32_epi8(c1), 1);
  if constexpr (Bits == 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), b);
  } else if constexpr (Bits == 4) {
    // As 16-bit lanes c[2i] | c[2i+1] << 8 with both codes < 16: c[2i] | c[2i+1] << 4 is
    // the lane's low nibble or'ed with the lane shifted right by 4.
    const __m256i pairs = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi16(0x000F)), _mm256_srli_epi16(b, 4));
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    // As 32-bit lanes c0 | c1 << 8 | c2 << 16 | c3 << 24 with codes < 64: the 24-bit
    // string c0 | c1 << 6 | c2 << 12 | c3 << 18, then three bytes of each dword kept.
    const __m256i d = b;
    __m256i p = _mm256_and_si256(d, splat8(0x3F));
    p = _mm256_or_si256(p, _mm256_and_si256(_mm256_srli_epi32(d, 2), splat8(0xFC0)));
    p = _mm256_or_si256(p, _mm256_and_si256(_mm256_srli_epi32(d, 4), splat8(0x3F000)));
    p = _mm256_or_si256(p, _mm256_and_si256(_mm256_srli_epi32(d, 6), splat8(0xFC0000)));
    const __m256i s = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(p, control(kDrop4th)), _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(s));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 16), _mm256_extracti128_si256(s, 1));
  }
}

// The block's 32 element codes (Bits * 4 bytes at in, nothing read beyond them) as bytes
// in element order.
template <int Bits>
__m256i load_elements(const uint8_t* in) {
  if constexpr (Bits == 8) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  } else if constexpr (Bits == 4) {
    // Byte i holds codes 2i (low nibble) and 2i + 1: as 16-bit lane i, low | high << 8.
    const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
    return _mm256_or_si256(_mm256_and_si256(w, _mm256_set1_epi16(0x000F)),
                           _mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x00F0)), 4));
  } else {
    // 24 bytes: twelve per 128-bit lane, three per dword, each dword's 24-bit string
    // c0 | c1 << 6 | c2 << 12 | c3 << 18 spread into its four bytes.
    const __m256i raw = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))),
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + 16)), 1);
    const __m256i d =
        _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(raw, _mm256_setr_epi32(0, 1, 2, 2, 3, 4, 5, 5)), control(kAdd4th));
    __m256i c = _mm256_and_si256(d, splat8(0x3F));
    c = _mm256_or_si256(c, _mm256_and_si256(_mm256_slli_epi32(d, 2), splat8(0x3F00)));
    c = _mm256_or_si256(c, _mm256_and_si256(_mm256_slli_epi32(d, 4), splat8(0x3F0000)));
    return _mm256_or_si256(c, _mm256_and_si256(_mm256_slli_epi32(d, 6), splat8(0x3F000000)));
  }
}

template <MxType M>
void mx_quantize(const float* x, int64_t blocks, uint8_t* out) {
  using Tr = MxTraits<M>;
  for (int64_t b = 0; b < blocks; ++b) {
    const float* v = x + b * kMxBlockSize;
    uint8_t* o = out + b * Tr::block_bytes;
    const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16);
    // Magnitude patterns of non-negative floats order as the values do.
    const __m512i abs_mask = splat(0x7FFFFFFFu);
    const uint32_t m = horizontal_max_u32(_mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(v0), abs_mask),
                                                           _mm512_and_si512(_mm512_castps_si512(v1), abs_mask)));
    if (m >= 0x7F800000u) {
      mx_quantize_block<M>(v, o);
      continue;
    }
    const int s = mx_exponent(m, Tr::emax);
    o[0] = static_cast<uint8_t>(s + 127);
    const __m512 factor = _mm512_set1_ps(pow2f(-s));
    const __m512 t0 = _mm512_mul_ps(v0, factor), t1 = _mm512_mul_ps(v1, factor);
    if constexpr (Tr::is_int) {
      store_elements<8>(int8_codes(t0), int8_codes(t1), o + 1);
    } else {
      store_elements<Tr::bits>(encode16<Tr::element, Overflow::Saturate>(_mm512_castps_si512(t0)),
                               encode16<Tr::element, Overflow::Saturate>(_mm512_castps_si512(t1)), o + 1);
    }
  }
}

template <MxType M>
void mx_dequantize(const uint8_t* in, int64_t blocks, float* x) {
  using Tr = MxTraits<M>;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* p = in + b * Tr::block_bytes;
    float* v = x + b * kMxBlockSize;
    if (p[0] == kMxNanScale) {
      mx_dequantize_block<M>(p, v);
      continue;
    }
    const __m512 scale = _mm512_set1_ps(pow2f(static_cast<int>(p[0]) - 127));
    const __m256i codes = load_elements<Tr::bits>(p + 1);
    const __m128i half[2] = {_mm256_castsi256_si128(codes), _mm256_extracti128_si256(codes, 1)};
    for (int h = 0; h < 2; ++h) {
      __m512 e;
      if constexpr (Tr::is_int) {
        e = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(half[h])), _mm512_set1_ps(0.015625f));
      } else {
        e = decode16<Tr::element>(_mm512_cvtepu8_epi32(half[h]));
      }
      _mm512_storeu_ps(v + 16 * h, _mm512_mul_ps(e, scale));
    }
  }
}

template <size_t... I>
constexpr MxKernels make(std::index_sequence<I...>) {
  MxKernels k{};
  ((k.quantize[I] = mx_quantize<static_cast<MxType>(I)>, k.dequantize[I] = mx_dequantize<static_cast<MxType>(I)>),
   ...);
  return k;
}

}  // namespace

extern const MxKernels kMx;
const MxKernels kMx = make(std::make_index_sequence<kMxTypeCount>{});

}  // namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512)
