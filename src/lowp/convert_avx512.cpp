// AVX-512 encode / decode kernels: 16 values per step, the ragged tail in the same vector
// code under a lane mask (masked loads read, and masked stores write, only the first
// n % 16 elements), so every element goes through the vector definition of vec_avx512.h,
// which the tests compare with the scalar one bit for bit.
#include <utility>

#include "lowp/kernels.h"
#include "lowp/vec_avx512.h"

namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

constexpr __mmask16 kAll = 0xFFFF;

// 16 float32 patterns from x (the lanes of m; the others 0).
__m512i load_floats(const float* x, __mmask16 m) {
  return _mm512_castps_si512(m == kAll ? _mm512_loadu_ps(x) : _mm512_maskz_loadu_ps(m, x));
}

// 16 codes (int32 lanes already in the code type's range) into the lanes of m of `codes`.
template <class Code>
void store_codes(Code* codes, __m512i c, __mmask16 m) {
  if constexpr (sizeof(Code) == 1) {
    if (m == kAll) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes), _mm512_cvtepi32_epi8(c));
    } else {
      _mm512_mask_cvtepi32_storeu_epi8(codes, m, c);
    }
  } else {
    if (m == kAll) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes), _mm512_cvtepi32_epi16(c));
    } else {
      _mm512_mask_cvtepi32_storeu_epi16(codes, m, c);
    }
  }
}

// 16 byte codes (the lanes of m; the others 0), zero-extended to int32 lanes.
__m512i load_codes(const uint8_t* codes, __mmask16 m) {
  return _mm512_cvtepu8_epi32(m == kAll ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes))
                                        : _mm_maskz_loadu_epi8(m, codes));
}

// 16 uint16 codes (the lanes of m; the others 0), as they are.
__m256i load_codes(const uint16_t* codes, __mmask16 m) {
  return m == kAll ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes)) : _mm256_maskz_loadu_epi16(m, codes);
}

void store_floats(float* x, __m512 f, __mmask16 m) {
  if (m == kAll) {
    _mm512_storeu_ps(x, f);
  } else {
    _mm512_mask_storeu_ps(x, m, f);
  }
}

template <LowpType T, Overflow O>
int64_t encode(const float* x, int64_t n, void* out) {
  CodeOf<T>* codes = static_cast<CodeOf<T>*>(out);
  int64_t first_nan = -1;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes_mask(n - i);
    const __m512i c = encode16<T, O>(load_floats(x + i, m));
    store_codes(codes + i, c, m);
    if constexpr (traits(T).special == Special::FiniteOnly) {
      const auto marked = static_cast<__mmask16>(_mm512_cmpeq_epi32_mask(c, splat(kNoNanMarker)) & m);
      if (marked != 0 && first_nan < 0) first_nan = i + first_lane(marked);
    }
  }
  return first_nan;
}

// fp16: vcvtph2ps is exact but quiets signalling NaNs; NaN lanes (rare: checked first)
// widen their payload bit for bit instead, as decode_bits does.
__m512 decode_fp16(__m256i raw) {
  const __m512 f = _mm512_cvtph_ps(raw);
  const __m512i h = _mm512_cvtepu16_epi32(raw);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h, splat(0x7FFF)), splat(0x7C00));
  if (nan == 0) return f;
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(h, splat(0x8000)), 16);
  const __m512i payload = _mm512_slli_epi32(_mm512_and_si512(h, splat(0x3FF)), 13);
  const __m512i widened = _mm512_or_si512(_mm512_or_si512(sign, splat(0x7F800000)), payload);
  return _mm512_mask_mov_ps(f, nan, _mm512_castsi512_ps(widened));
}

template <LowpType T>
int64_t decode(const void* in, int64_t n, float* x) {
  const CodeOf<T>* codes = static_cast<const CodeOf<T>*>(in);
  int64_t first_bad = -1;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes_mask(n - i);
    __m512 f;
    if constexpr (T == LowpType::Bf16) {
      f = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(load_codes(codes + i, m)), 16));
    } else if constexpr (T == LowpType::Fp16) {
      f = decode_fp16(load_codes(codes + i, m));
    } else {
      const __m512i c = load_codes(codes + i, m);
      f = decode16<T>(c);
      if constexpr (traits(T).bits < 8) {
        const auto bad = static_cast<__mmask16>(_mm512_cmpgt_epi32_mask(c, splat((1u << traits(T).bits) - 1)) & m);
        if (bad != 0 && first_bad < 0) first_bad = i + first_lane(bad);
      }
    }
    store_floats(x + i, f, m);
  }
  return first_bad;
}

template <size_t... I>
constexpr ConvertKernels make(std::index_sequence<I...>) {
  ConvertKernels k{};
  ((k.encode[I][0] = encode<static_cast<LowpType>(I), Overflow::Default>,
    k.encode[I][1] = encode<static_cast<LowpType>(I), Overflow::Saturate>,
    k.decode[I] = decode<static_cast<LowpType>(I)>),
   ...);
  return k;
}

}  // namespace

extern const ConvertKernels kConvert;
const ConvertKernels kConvert = make(std::make_index_sequence<kLowpTypeCount>{});

}  // namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512)
