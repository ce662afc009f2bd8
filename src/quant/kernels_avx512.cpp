// AVX-512 quantize / dequantize kernels (16 lanes; masked loads and stores for the tail).
//
// Same operations as the scalar reference, in the same order: an IEEE float32 division,
// round-half-even by vrndscaleps (immediate rounding mode, independent of MXCSR), clamp,
// convert, add the zero point. NaN lanes are blended to the zero point.
#include "cpu/x86.h"

#include <cstdint>
#include <type_traits>

#include "quant/kernels.h"

namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// Loads n <= 16 elements of type Q (masked) and widens them to int32 lanes.
template <class Q>
__m512i load_widen(const Q* p, __mmask16 m) {
  if constexpr (std::is_same_v<Q, int8_t>) return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p));
  if constexpr (std::is_same_v<Q, uint8_t>) return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p));
  if constexpr (std::is_same_v<Q, int16_t>) return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, p));
  if constexpr (std::is_same_v<Q, uint16_t>) return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
  if constexpr (std::is_same_v<Q, int32_t>) return _mm512_maskz_loadu_epi32(m, p);
}

// Stores the int32 lanes selected by m, narrowed to Q; lanes are already in Q's range,
// so the truncating narrow (vpmovdb / vpmovdw) is exact.
template <class Q>
void store_narrow(Q* p, __mmask16 m, __m512i v) {
  if constexpr (sizeof(Q) == 1) _mm512_mask_cvtepi32_storeu_epi8(p, m, v);
  if constexpr (sizeof(Q) == 2) _mm512_mask_cvtepi32_storeu_epi16(p, m, v);
  if constexpr (sizeof(Q) == 4) _mm512_mask_storeu_epi32(p, m, v);
}

__mmask16 tail_mask(int64_t remaining) {
  return remaining >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << remaining) - 1u);
}

// One vector of quantization: lanes of x with per-lane scale and zero point.
__m512i quantize_vec(__m512 x, __m512 scale, __m512i zp, __m512i qmin, __m512i qmax, __mmask16* nan) {
  *nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  __m512 r = _mm512_roundscale_ps(_mm512_div_ps(x, scale), kRound);
  const __m512 lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(qmin, zp));
  const __m512 hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(qmax, zp));
  r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
  r = _mm512_mask_blend_ps(*nan, r, _mm512_setzero_ps());
  return _mm512_add_epi32(_mm512_cvttps_epi32(r), zp);
}

int64_t first_lane(__mmask16 m) { return __builtin_ctz(static_cast<unsigned>(m)); }

template <class Q>
int64_t quantize(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, Q* out) {
  const __m512 vs = _mm512_set1_ps(scale);
  const __m512i vzp = _mm512_set1_epi32(zp), vmin = _mm512_set1_epi32(qmin), vmax = _mm512_set1_epi32(qmax);
  int64_t first_nan = -1;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    __mmask16 nan;
    const __m512i q = quantize_vec(_mm512_maskz_loadu_ps(m, x + i), vs, vzp, vmin, vmax, &nan);
    if ((nan & m) && first_nan < 0) first_nan = i + first_lane(nan & m);
    store_narrow(out + i, m, q);
  }
  return first_nan;
}

template <class Q>
int64_t quantize_pc(const float* x, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                    int32_t qmax, Q* out) {
  const __m512i vmin = _mm512_set1_epi32(qmin), vmax = _mm512_set1_epi32(qmax);
  int64_t first_nan = -1;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    // Masked-off lanes get scale 1 so that the division stays well defined.
    const __m512 vs = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, scale + i);
    const __m512i vzp = _mm512_maskz_loadu_epi32(m, zp + i);
    __mmask16 nan;
    const __m512i q = quantize_vec(_mm512_maskz_loadu_ps(m, x + i), vs, vzp, vmin, vmax, &nan);
    if ((nan & m) && first_nan < 0) first_nan = i + first_lane(nan & m);
    store_narrow(out + i, m, q);
  }
  return first_nan;
}

// Index of the first lane of v outside [qmin, qmax] among those in m, or -1.
int64_t first_out_of_range(__m512i v, __m512i vmin, __m512i vmax, __mmask16 m) {
  const __mmask16 bad = (_mm512_cmplt_epi32_mask(v, vmin) | _mm512_cmpgt_epi32_mask(v, vmax)) & m;
  return bad ? first_lane(bad) : -1;
}

template <class Q>
int64_t dequantize(const Q* q, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, float* out) {
  const __m512 vs = _mm512_set1_ps(scale);
  const __m512i vzp = _mm512_set1_epi32(zp), vmin = _mm512_set1_epi32(qmin), vmax = _mm512_set1_epi32(qmax);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512i v = load_widen(q + i, m);
    if (const int64_t bad = first_out_of_range(v, vmin, vmax, m); bad >= 0) return i + bad;
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, vzp)), vs));
  }
  return -1;
}

template <class Q>
int64_t dequantize_pc(const Q* q, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                      int32_t qmax, float* out) {
  const __m512i vmin = _mm512_set1_epi32(qmin), vmax = _mm512_set1_epi32(qmax);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512i v = load_widen(q + i, m);
    if (const int64_t bad = first_out_of_range(v, vmin, vmax, m); bad >= 0) return i + bad;
    const __m512 vs = _mm512_maskz_loadu_ps(m, scale + i);
    const __m512i vzp = _mm512_maskz_loadu_epi32(m, zp + i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, vzp)), vs));
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

}  // namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx512)
