// AVX2 encode / decode kernels: 32 (8-bit codes) or 16 (16-bit codes) values per step,
// the remainder through the scalar element functions, which define the result.
#include <immintrin.h>

#include <utility>

#include "lowp/kernels.h"
#include "lowp/vec_avx2.h"

namespace fixq::lowp_detail {

namespace {

// Index of the lowest set lane of an 8-lane mask (movemask bits), or -1.
int64_t first_lane(int bits) { return bits ? __builtin_ctz(static_cast<unsigned>(bits)) : -1; }

__m256i load8(const float* p) { return _mm256_castps_si256(_mm256_loadu_ps(p)); }

template <LowpType T, Overflow O>
int64_t encode(const float* x, int64_t n, void* out) {
  CodeOf<T>* codes = static_cast<CodeOf<T>*>(out);
  int64_t first_nan = -1, i = 0;
  constexpr bool kCheckNan = traits(T).special == Special::FiniteOnly;
  if constexpr (traits(T).bits == 16) {
    for (; i + 16 <= n; i += 16) {
      const __m256i c = narrow16x16(encode8<T, O>(load8(x + i)), encode8<T, O>(load8(x + i + 8)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), c);
    }
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m256i c = narrow32x8(encode8<T, O>(load8(x + i)), encode8<T, O>(load8(x + i + 8)),
                                   encode8<T, O>(load8(x + i + 16)), encode8<T, O>(load8(x + i + 24)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), c);
      if constexpr (kCheckNan) {
        const int marked = _mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8(static_cast<char>(kNoNanMarker))));
        if (marked && first_nan < 0) first_nan = i + __builtin_ctz(static_cast<unsigned>(marked));
      }
    }
  }
  const int64_t tail = encode_run<T, O>(x + i, n - i, codes + i);
  return first_nan >= 0 ? first_nan : (tail >= 0 ? i + tail : -1);
}

template <LowpType T>
int64_t decode(const void* in, int64_t n, float* x) {
  const CodeOf<T>* codes = static_cast<const CodeOf<T>*>(in);
  int64_t first_bad = -1, i = 0;
  if constexpr (T == LowpType::Bf16) {
    for (; i + 8 <= n; i += 8) {
      const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), _mm256_slli_epi32(h, 16));
    }
  } else if constexpr (T == LowpType::Fp16) {
    for (; i + 8 <= n; i += 8) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i));
      __m256i f = _mm256_castps_si256(_mm256_cvtph_ps(raw));  // exact, but quiets signalling NaNs
      // NaN lanes: widen the payload bit for bit instead, as decode_bits does.
      const __m256i h = _mm256_cvtepu16_epi32(raw);
      const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(h, splat(0x7FFF)), splat(0x7C00));
      const __m256i widened = _mm256_or_si256(
          _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(h, splat(0x8000)), 16), splat(0x7F800000)),
          _mm256_slli_epi32(_mm256_and_si256(h, splat(0x3FF)), 13));
      f = _mm256_blendv_epi8(f, widened, nan);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), f);
    }
  } else {
    const std::array<uint32_t, 256>& table = decode_table<T>();
    constexpr uint32_t kMaxCode = (1u << traits(T).bits) - 1;
    for (; i + 8 <= n; i += 8) {
      const __m256i idx = load_u8x8(codes + i);
      _mm256_storeu_ps(x + i, gather_decode(table, idx));
      if constexpr (kMaxCode < 255) {
        const int bad = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, splat(kMaxCode))));
        if (bad && first_bad < 0) first_bad = i + first_lane(bad);
      }
    }
  }
  const int64_t tail = decode_run<T>(codes + i, n - i, x + i);
  return first_bad >= 0 ? first_bad : (tail >= 0 ? i + tail : -1);
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

namespace avx2 {
extern const ConvertKernels kAvx2Convert;
const ConvertKernels kAvx2Convert = make(std::make_index_sequence<kLowpTypeCount>{});
}  // namespace avx2

}  // namespace fixq::lowp_detail
