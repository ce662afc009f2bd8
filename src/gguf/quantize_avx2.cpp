// AVX2 quantizers of the 8-bit activation formats Q8_0, Q8_1 and Q8_K (the right-hand
// operands of the dot products, quantized once per matrix-vector product, so they pay),
// and the non-finite scan every quantize starts with.
//
// Bit-identity with the references: the maxima are exact (max is order-free), the scales
// are the same scalar float operations, x * id is one IEEE multiply per lane, and the
// rounding functions are reproduced exactly: roundf as trunc + (|frac| >= 0.5 ? sign : 0)
// (frac = p - trunc(p) is exact), nearest_int as the same magic-number add. The quants
// stay within [-127, 127], so the saturating packs never saturate. A block whose 1/d
// (or Q8_K's -127 / max) overflows (|x| max below ~4e-37) goes through the reference,
// which reproduces what ggml makes of the infinite products.
#include <cmath>

#include "gguf/util_avx2.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// A function, not a namespace-scope constant: a static initializer here would execute AVX
// instructions at program start, on any CPU.
__m256 abs_mask() { return _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)); }

float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// max |x[0..n)| for n a multiple of 8.
float absmax(const float* x, int n) {
  __m256 m = _mm256_setzero_ps();
  for (int j = 0; j < n; j += 8) m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask()));
  return hmax(m);
}

// roundf of each lane: ties away from zero.
__m256i round_away(__m256 p) {
  const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = _mm256_and_ps(_mm256_sub_ps(p, t), abs_mask());
  const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_andnot_ps(abs_mask(), p));  // +-1, sign of p
  return _mm256_cvtps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, one)));
}

// ggml's nearest_int of each lane (exact for |p| <= 2^22).
__m256i nearest(__m256 p) {
  const __m256i bits = _mm256_castps_si256(_mm256_add_ps(p, _mm256_set1_ps(12582912.0f)));
  return _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x00400000));
}

// Four vectors of 8 int32 in [-128, 127] -> 32 int8 in element order.
__m256i pack_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
  return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// The 32 quants round(x * id) of a Q8_0 / Q8_1 block; *sum gets their sum.
__m256i q8_codes(const float* x, float id, int32_t* sum) {
  const __m256 vid = _mm256_set1_ps(id);
  __m256i q[4];
  for (int k = 0; k < 4; ++k) q[k] = round_away(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), vid));
  *sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
  return pack_i8(q[0], q[1], q[2], q[3]);
}

}  // namespace

namespace {

// Q8_0 and Q8_1 (which also stores s = d * sum of its codes): d = absmax / 127 and the
// codes round(x / d); a block whose 1 / d is not finite goes through the reference.
template <class Block, bool kSum>
void quantize_q8_32(const float* x, int64_t n_blocks, std::byte* out, void (*reference)(const float*, int64_t, std::byte*)) {
  for (int64_t i = 0; i < n_blocks; ++i, x += kQK, out += sizeof(Block)) {
    const float d = absmax(x, kQK) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    if (!std::isfinite(id)) {
      reference(x, 1, out);
      continue;
    }
    int32_t sum;
    const __m256i q = q8_codes(x, id, &sum);
    const uint16_t dh = fp32_to_fp16(d);
    __builtin_memcpy(out + offsetof(Block, d), &dh, sizeof dh);
    if constexpr (kSum) {
      const uint16_t sh = fp32_to_fp16(static_cast<float>(sum) * d);
      __builtin_memcpy(out + offsetof(Block, s), &sh, sizeof sh);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + offsetof(Block, qs)), q);
  }
}

}  // namespace

void quantize_q8_0_avx2(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_q8_32<BlockQ8_0, false>(x, n_blocks, out, quantize_q8_0_ref);
}

void quantize_q8_1_avx2(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_q8_32<BlockQ8_1, true>(x, n_blocks, out, quantize_q8_1_ref);
}

void quantize_q8_k_avx2(const float* x, int64_t n_blocks, std::byte* out) {
  for (int64_t i = 0; i < n_blocks; ++i, x += kQK_K, out += sizeof(BlockQ8_K)) {
    const float amax = absmax(x, kQK_K);
    if (amax == 0.0f) {
      __builtin_memset(out, 0, sizeof(BlockQ8_K));
      continue;
    }
    int first = 0;  // ggml keeps the first element of largest magnitude, with its sign
    while (std::fabs(x[first]) != amax) ++first;
    const float iscale = -127.0f / x[first];
    if (!std::isfinite(iscale)) {  // |x| max below ~4e-37
      quantize_q8_k_ref(x, 1, out);
      continue;
    }
    const __m256 vs = _mm256_set1_ps(iscale);
    const __m256i cap = _mm256_set1_epi32(127);
    int16_t bsums[16];
    for (int j = 0; j < kQK_K; j += 32) {
      __m256i q[4];
      for (int k = 0; k < 4; ++k) q[k] = _mm256_min_epi32(cap, nearest(_mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * k), vs)));
      bsums[j / 16] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[0], q[1])));
      bsums[j / 16 + 1] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[2], q[3])));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + offsetof(BlockQ8_K, qs) + j), pack_i8(q[0], q[1], q[2], q[3]));
    }
    const float d = 1.0f / iscale;
    __builtin_memcpy(out + offsetof(BlockQ8_K, d), &d, sizeof d);
    __builtin_memcpy(out + offsetof(BlockQ8_K, bsums), bsums, sizeof bsums);
  }
}

int64_t first_nonfinite_avx2(const float* x, int64_t n) {
  const __m256i exp_mask = _mm256_set1_epi32(0x7F800000);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i e = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), exp_mask);
    const int bad = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(e, exp_mask)));
    if (bad) return i + __builtin_ctz(static_cast<unsigned>(bad));
  }
  for (; i < n; ++i)
    if (!std::isfinite(x[i])) return i;
  return -1;
}

}  // namespace fixq::gguf::detail
