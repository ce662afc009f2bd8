// AVX2 quantize / dequantize kernels: 8 lanes per vector, the remainder of a run through
// the scalar kernels (which define the result, so the tail is identical).
#include "cpu/x86.h"

#include <cstdint>
#include <type_traits>

#include "quant/kernels.h"

namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx2) {

namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__m256i quantize_vec(__m256 x, __m256 scale, __m256i zp, __m256i qmin, __m256i qmax, int* nan_bits) {
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  *nan_bits = _mm256_movemask_ps(nan);
  __m256 r = _mm256_round_ps(_mm256_div_ps(x, scale), kRound);
  const __m256 lo = _mm256_cvtepi32_ps(_mm256_sub_epi32(qmin, zp));
  const __m256 hi = _mm256_cvtepi32_ps(_mm256_sub_epi32(qmax, zp));
  r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
  r = _mm256_andnot_ps(nan, r);  // NaN lanes -> 0, i.e. the zero point after the add
  return _mm256_add_epi32(_mm256_cvttps_epi32(r), zp);
}

// Stores 8 int32 lanes (already inside Q's range) as Q.
template <class Q>
void store8(Q* p, __m256i v) {
  if constexpr (sizeof(Q) == 4) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  } else {
    // Narrowing packs are exact because every lane is in range; packs work per 128-bit
    // half, so the low 8 bytes / 16 bytes of each half hold lanes 0-3 and 4-7.
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    __m128i w = std::is_signed_v<Q> ? _mm_packs_epi32(lo, hi) : _mm_packus_epi32(lo, hi);
    if constexpr (sizeof(Q) == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
    } else {
      w = std::is_signed_v<Q> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p), w);
    }
  }
}

template <class Q>
__m256i load8(const Q* p) {
  if constexpr (std::is_same_v<Q, int32_t>) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (sizeof(Q) == 2) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<Q> ? _mm256_cvtepi16_epi32(v) : _mm256_cvtepu16_epi32(v);
  }
  if constexpr (sizeof(Q) == 1) {
    const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
  }
}

int64_t first_lane(int bits) { return __builtin_ctz(static_cast<unsigned>(bits)); }

int first_out_of_range(__m256i v, __m256i vmin, __m256i vmax) {
  const __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi32(vmin, v), _mm256_cmpgt_epi32(v, vmax));
  const int bits = _mm256_movemask_ps(_mm256_castsi256_ps(bad));
  return bits ? static_cast<int>(first_lane(bits)) : -1;
}

template <class Q>
int64_t quantize(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, Q* out) {
  const __m256 vs = _mm256_set1_ps(scale);
  const __m256i vzp = _mm256_set1_epi32(zp), vmin = _mm256_set1_epi32(qmin), vmax = _mm256_set1_epi32(qmax);
  int64_t first_nan = -1, i = 0;
  for (; i + 8 <= n; i += 8) {
    int nan;
    store8(out + i, quantize_vec(_mm256_loadu_ps(x + i), vs, vzp, vmin, vmax, &nan));
    if (nan && first_nan < 0) first_nan = i + first_lane(nan);
  }
  if (i < n) {  // the remainder through the scalar definition itself
    const int64_t t = scalar::kQuant.of<Q>().quantize(x + i, n - i, scale, zp, qmin, qmax, out + i);
    if (first_nan < 0 && t >= 0) first_nan = i + t;
  }
  return first_nan;
}

template <class Q>
int64_t quantize_pc(const float* x, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                    int32_t qmax, Q* out) {
  const __m256i vmin = _mm256_set1_epi32(qmin), vmax = _mm256_set1_epi32(qmax);
  int64_t first_nan = -1, i = 0;
  for (; i + 8 <= n; i += 8) {
    int nan;
    const __m256i vzp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp + i));
    store8(out + i, quantize_vec(_mm256_loadu_ps(x + i), _mm256_loadu_ps(scale + i), vzp, vmin, vmax, &nan));
    if (nan && first_nan < 0) first_nan = i + first_lane(nan);
  }
  if (i < n) {
    const int64_t t = scalar::kQuant.of<Q>().quantize_pc(x + i, n - i, scale + i, zp + i, qmin, qmax, out + i);
    if (first_nan < 0 && t >= 0) first_nan = i + t;
  }
  return first_nan;
}

template <class Q>
int64_t dequantize(const Q* q, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, float* out) {
  const __m256 vs = _mm256_set1_ps(scale);
  const __m256i vzp = _mm256_set1_epi32(zp), vmin = _mm256_set1_epi32(qmin), vmax = _mm256_set1_epi32(qmax);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i v = load8(q + i);
    if (const int bad = first_out_of_range(v, vmin, vmax); bad >= 0) return i + bad;
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vzp)), vs));
  }
  if (i < n) {
    const int64_t t = scalar::kQuant.of<Q>().dequantize(q + i, n - i, scale, zp, qmin, qmax, out + i);
    if (t >= 0) return i + t;
  }
  return -1;
}

template <class Q>
int64_t dequantize_pc(const Q* q, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                      int32_t qmax, float* out) {
  const __m256i vmin = _mm256_set1_epi32(qmin), vmax = _mm256_set1_epi32(qmax);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i v = load8(q + i);
    if (const int bad = first_out_of_range(v, vmin, vmax); bad >= 0) return i + bad;
    const __m256i vzp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vzp)), _mm256_loadu_ps(scale + i)));
  }
  if (i < n) {
    const int64_t t = scalar::kQuant.of<Q>().dequantize_pc(q + i, n - i, scale + i, zp + i, qmin, qmax, out + i);
    if (t >= 0) return i + t;
  }
  return -1;
}

template <class Q>
constexpr QuantKernels<Q> make() {
  return {&quantize<Q>, &quantize_pc<Q>, &dequantize<Q>, &dequantize_pc<Q>};
}

}  // namespace

extern const QuantTable kQuant;
const QuantTable kQuant{make<int8_t>(), make<uint8_t>(), make<int16_t>(), make<uint16_t>(), make<int32_t>()};

}  // namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx2)
